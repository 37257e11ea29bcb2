import { runService } from '@cs/service';
import { identityService } from './service';

/** Identity in a process of its own. */
void runService(identityService);
