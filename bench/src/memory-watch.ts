/**
 * The memory of the whole run's processes: each one's RSS before and after each scenario, and a
 * snapshot of ours, FerretDB and PostgreSQL at a moment.
 */
import type { Child, MongoServer, RunningSystem } from '@cs/devstack';
import { memoryOf, processTree, rssMb } from './rss';

export type MemoryWatch = ReturnType<typeof watchMemory>;

export function watchMemory(system: RunningSystem, mongo: MongoServer) {
  const processes: Record<string, Child> = Object.fromEntries(
    Object.values(system.processes).map((p) => [p.name, p.child]),
  );
  const memory: Record<string, Record<string, { before: number; after: number }>> = {};
  const scenario = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    const before = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMb(c.pid)]));
    process.stdout.write(`bench: ${name}…\n`);
    const result = await body();
    memory[name] = Object.fromEntries(
      Object.entries(processes).map(([n, c]) => [n, { before: before[n] ?? 0, after: rssMb(c.pid) }]),
    );
    return result;
  };

  // Memory per process: ours, FerretDB, and PostgreSQL with its backends. RSS counts the pages
  // a process shares (Node's own code, in each of ours) in full; PSS counts its share of them.
  const memorySnapshot = () => {
    const ours = Object.fromEntries(Object.values(system.processes).map((p) => [p.name, memoryOf([p.child.pid])]));
    const pids = Object.values(system.processes).map((p) => p.child.pid);
    return {
      ...ours,
      'ours together': memoryOf(pids),
      ...(mongo.child ? { ferretdb: memoryOf([mongo.child.pid]) } : {}),
      ...(mongo.postgres ? { postgres: memoryOf(processTree(mongo.postgres.pid)) } : {}),
    };
  };
  return { processes, memory, scenario, memorySnapshot };
}
