import { globalTeardown } from './global-setup';

export default globalTeardown;
