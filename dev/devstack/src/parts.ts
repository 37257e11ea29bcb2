/** The parts of the system, each run from its built entry, and how Node runs them. */
export const SERVICES = ['identity', 'posts', 'notes', 'files', 'realtime'] as const;
export type ServiceName = (typeof SERVICES)[number];
export type ProcessName = ServiceName | 'gateway';

/**
 * Node's flags for every process, as the Dockerfile sets them (NODE_OPTIONS). Node 24 lets V8
 * grow the young generation to suit the machine, and under steady load each process's RSS then
 * climbed by 50-100 MB in steps while its live heap stayed at 15-30 MB (bench/results/soak.md).
 * A cap keeps RSS flat. Both semi-spaces of the young generation end up resident, so the cap is
 * memory every process keeps: at 8 MB (against Node's long-standing 16) the five processes took
 * 15 MB less at idle and 35 MB less after load, at the same throughput (1,800 reads a second by
 * id through the gateway, three rounds each, interleaved). At 4 MB the one process of npm start
 * took 9 MB less PSS at idle (113 → 103 MB), with reads by id and creates as fast, within the
 * noise of two runs each (5,282 and 5,009 against 5,479 and 3,777 reads a second; 259 and 279
 * against 269 and 253 creates).
 */
export const NODE_FLAGS = ['--max-semi-space-size=4'];

export const ENTRY: Record<ProcessName, string> = {
  identity: 'services/identity/dist/src/server.js',
  posts: 'services/posts/dist/src/server.js',
  notes: 'services/notes/dist/src/server.js',
  files: 'services/files/dist/src/server.js',
  realtime: 'services/realtime/dist/src/server.js',
  gateway: 'gateway/dist/src/server.js',
};
/** Every part in one process. */
export const ONE_PROCESS_ENTRY = 'server/dist/src/main.js';

export const PROCESSES: readonly ProcessName[] = [...SERVICES, 'gateway'];
