import { runPart } from '@cs/service';
import { identityService } from './service';

/** Identity in a process of its own. */
void runPart(identityService);
