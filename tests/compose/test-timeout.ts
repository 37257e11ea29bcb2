/**
 * The Compose tests' time bound, set for their jest project alone (jest reads `testTimeout` only as
 * a global option). It bounds each step too (a `beforeAll`): building every image or rolling the
 * gateways under traffic takes minutes on two cores.
 */
import { jest } from '@jest/globals';

jest.setTimeout(600_000);
