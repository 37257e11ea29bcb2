import { runPart } from '@cs/service';
import { realtimeService } from './service';

/** Realtime in a process of its own. */
void runPart(realtimeService);
