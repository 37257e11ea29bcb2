/**
 * The stack of a Swarm test run (scripts/swarm-e2e.sh names it and renders its file), seen through
 * a real Docker client (`STACK_DOCKER`): deploys of the stack file with the settings `docker stack
 * deploy` fills it with, and each service's tasks and update as Swarm reports them.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { need, run } from '../compose/compose';

export interface Task {
  id: string;
  image: string;
  /** Swarm's state of the task now: `running` once its health check has passed. */
  state: string;
  desired: string;
  error: string;
}

/** A service's rolling update as Swarm reports it: `updating`, `completed`, `rollback_completed`… */
export interface UpdateStatus {
  state: string;
  message: string;
}

export class Stack {
  readonly name = need('STACK');
  private readonly file = need('STACK_FILE');
  readonly docker = need('STACK_DOCKER');

  /** `docker stack deploy` with these settings: a change of any service rolls that service. */
  async deploy(settings: Record<string, string>): Promise<void> {
    await this.must(['stack', 'deploy', '--detach=true', '-c', this.file, this.name], { ...process.env, ...settings });
  }

  service(name: string): string {
    return `${this.name}_${name}`;
  }

  async tasks(service: string): Promise<Task[]> {
    const out = await this.must([
      'service',
      'ps',
      '--no-trunc',
      '--format',
      '{{.ID}}\t{{.Image}}\t{{.CurrentState}}\t{{.DesiredState}}\t{{.Error}}',
      this.service(service),
    ]);
    return out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [id = '', image = '', current = '', desired = '', error = ''] = line.split('\t');
        return { id, image, state: (current.split(' ')[0] ?? '').toLowerCase(), desired: desired.toLowerCase(), error };
      });
  }

  /** The tasks that run and are meant to. */
  async running(service: string): Promise<Task[]> {
    return (await this.tasks(service)).filter((t) => t.state === 'running' && t.desired === 'running');
  }

  async updateStatus(service: string): Promise<UpdateStatus | undefined> {
    const out = (await this.must(['service', 'inspect', '-f', '{{json .UpdateStatus}}', this.service(service)])).trim();
    if (out === '' || out === 'null') return undefined;
    const status = JSON.parse(out) as { State?: string; Message?: string };
    return { state: status.State ?? '', message: status.Message ?? '' };
  }

  /**
   * Waits until `service` runs exactly `replicas` tasks, all of `image` (when given), and no
   * update is under way; returns when that was first seen. Throws after `timeoutMs`.
   */
  async settled(
    service: string,
    replicas: number,
    { image, timeoutMs = 180_000 } = {} as { image?: string; timeoutMs?: number },
  ): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let seen = '';
    while (Date.now() < deadline) {
      const tasks = await this.tasks(service);
      const running = tasks.filter((t) => t.state === 'running' && t.desired === 'running');
      const leaving = tasks.filter(
        (t) => t.desired !== 'running' && ['running', 'starting', 'preparing'].includes(t.state),
      );
      const update = await this.updateStatus(service);
      seen = `${running.length} running (${[...new Set(running.map((t) => t.image))].join(', ')}), ${leaving.length} leaving, update ${update?.state ?? 'none'}`;
      const ready =
        running.length === replicas &&
        leaving.length === 0 &&
        (!image || running.every((t) => t.image === image)) &&
        (!update || !['updating', 'rollback_started', 'paused', 'rollback_paused'].includes(update.state));
      if (ready) return Date.now();
      await sleep(500);
    }
    throw new Error(
      `${service} did not settle on ${replicas} task(s)${image ? ` of ${image}` : ''} within ${timeoutMs / 1000} s: ${seen}`,
    );
  }

  /** Waits until the service's update has reached one of `states`; returns that status. */
  async updateReaches(service: string, states: readonly string[], timeoutMs = 180_000): Promise<UpdateStatus> {
    const deadline = Date.now() + timeoutMs;
    let last: UpdateStatus | undefined;
    while (Date.now() < deadline) {
      last = await this.updateStatus(service);
      if (last && states.includes(last.state)) return last;
      await sleep(500);
    }
    throw new Error(
      `${service}'s update did not reach ${states.join(' or ')} within ${timeoutMs / 1000} s: ${last?.state ?? 'none'}`,
    );
  }

  async scale(service: string, replicas: number): Promise<void> {
    await this.must(['service', 'scale', '--detach=true', `${this.service(service)}=${replicas}`]);
  }

  /** Replaces every task of `service` with a new one, one at a time, as its update_config says. */
  async replaceTasks(service: string): Promise<void> {
    await this.must(['service', 'update', '--detach=true', '--force', this.service(service)]);
  }

  /** The container of each running task of `service`, on this node. */
  async containers(service: string): Promise<string[]> {
    const out = await this.must([
      'ps',
      '-q',
      '--filter',
      `label=com.docker.swarm.service.name=${this.service(service)}`,
      '--filter',
      'status=running',
    ]);
    return out.trim().split('\n').filter(Boolean);
  }

  /**
   * Kills `container` with `docker kill` and says when its process died: not before `from`, when
   * the command began, and not after `to`, when this host saw the process gone (looked for every
   * 2 ms; the test runs on the engine's host). The engine's own record of the exit comes hundreds
   * of milliseconds later on a busy machine.
   */
  async kill(container: string): Promise<{ from: number; to: number }> {
    const pid = Number((await this.must(['inspect', '--format', '{{.State.Pid}}', container])).trim());
    if (!alive(pid)) throw new Error(`the process of ${container} (${pid}) is not seen here: run on the engine's host`);
    let to = 0;
    const watch = setInterval(() => {
      if (to === 0 && !alive(pid)) to = Date.now();
    }, 2);
    const from = Date.now();
    try {
      await this.must(['kill', container]);
      const deadline = Date.now() + 10_000;
      while (to === 0 && Date.now() < deadline) await sleep(5);
    } finally {
      clearInterval(watch);
    }
    if (to === 0) throw new Error(`the process of ${container} (${pid}) still runs 10 s after docker kill`);
    return { from, to };
  }

  /**
   * The log lines of every container `service` has had on this node since `sinceMs` that mention
   * one of `words`, read from each container's own log (`docker service logs` printed them, then
   * never ended).
   */
  async logLinesAbout(service: string, sinceMs: number, words: readonly string[]): Promise<string[]> {
    if (words.length === 0) return [];
    const containers = (
      await this.must(['ps', '-aq', '--filter', `label=com.docker.swarm.service.name=${this.service(service)}`])
    )
      .trim()
      .split('\n')
      .filter(Boolean);
    const since = new Date(sinceMs).toISOString();
    const lines = await Promise.all(
      containers.map(async (c) => {
        const r = await run(this.docker, ['logs', '--since', since, c]);
        return `${r.stdout}\n${r.stderr}`.split('\n');
      }),
    );
    return lines.flat().filter((l) => words.some((w) => l.includes(w)));
  }

  async must(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
    const r = await run(this.docker, args, { env });
    if (r.code !== 0)
      throw new Error(`docker ${args.join(' ')} exited ${r.code}:\n${(r.stderr || r.stdout).trim().slice(-3000)}`);
    return r.stdout;
  }
}

/** Whether process `pid` of this host runs: a zombie (dead, not yet reaped) has closed its sockets. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}
