import { runPart } from '@cs/service';
import { postsService } from './service';

/** Posts in a process of its own. */
void runPart(postsService);
