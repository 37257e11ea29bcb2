import { runPart } from '@cs/service';
import { filesService } from './service';

/** Files in a process of its own. */
void runPart(filesService);
