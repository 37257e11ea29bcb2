import { runPart } from '@cs/service';
import { notesService } from './service';

/** Notes in a process of its own. */
void runPart(notesService);
