/**
 * The Docker Compose project of a Compose test run (scripts/compose-e2e.sh names it), seen through
 * the real clients: the Compose client (`COMPOSE`, project and files from `COMPOSE_PROJECT_NAME` and
 * `COMPOSE_FILE`) and the Docker client (`DOCKER`). Every call runs the command and returns what
 * it printed; one that fails throws with its output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(
  command: string,
  args: readonly string[],
  { env = process.env, input }: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
    child.stdin.end(input);
  });
}

async function must(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await run(command, args, { env });
  if (r.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${r.code}:\n${(r.stderr || r.stdout).trim().slice(-3000)}`);
  }
  return r.stdout;
}

export interface ContainerState {
  id: string;
  name: string;
  service: string;
  image: string;
  status: string;
  health?: string;
  exitCode: number;
  restartCount: number;
  /** The container's main process as the host sees it (0 when not running). */
  pid: number;
  /** Published ports: container port (`3000/tcp`) → `address:port` on the host. */
  published: Record<string, string[]>;
  env: string[];
  /** The whole `docker inspect` record. */
  raw: unknown;
}

interface Inspect {
  Id: string;
  Name: string;
  Image: string;
  RestartCount: number;
  State: { Status: string; Health?: { Status: string }; ExitCode: number; Pid: number };
  Config: { Env: string[] | null; Labels: Record<string, string> | null };
  NetworkSettings: { Ports: Record<string, { HostIp: string; HostPort: string }[] | null> | null };
}

export class Compose {
  readonly compose = need('COMPOSE');
  readonly docker = need('DOCKER');
  readonly envFile = need('COMPOSE_ENV_FILE');

  /** `docker compose --env-file … <args>`; `extraEnv` adds to the client's environment. */
  async exec(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
    return must(this.compose, ['--env-file', this.envFile, ...args], { ...process.env, ...extraEnv });
  }

  docker$(args: readonly string[]): Promise<string> {
    return must(this.docker, args);
  }

  /** Every container of the project, running or not, optionally of one service. */
  async containers(service?: string): Promise<ContainerState[]> {
    const ids = (await this.exec(['ps', '-a', '-q', ...(service ? [service] : [])])).split('\n').filter(Boolean);
    if (ids.length === 0) return [];
    const records = JSON.parse(await this.docker$(['inspect', ...ids])) as Inspect[];
    return records.map((c) => ({
      id: c.Id,
      name: c.Name.replace(/^\//, ''),
      service: c.Config.Labels?.['com.docker.compose.service'] ?? '',
      image: c.Image,
      status: c.State.Status,
      health: c.State.Health?.Status,
      exitCode: c.State.ExitCode,
      restartCount: c.RestartCount,
      pid: c.State.Pid,
      published: Object.fromEntries(
        Object.entries(c.NetworkSettings.Ports ?? {})
          .filter(([, bindings]) => bindings && bindings.length > 0)
          .map(([port, bindings]) => [port, (bindings ?? []).map((b) => `${b.HostIp}:${b.HostPort}`)]),
      ),
      env: c.Config.Env ?? [],
      raw: c,
    }));
  }

  /** Waits until every running container of `service` is healthy, `count` of them. */
  async waitHealthy(service: string, count = 1, timeoutMs = 120_000): Promise<ContainerState[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const running = (await this.containers(service)).filter((c) => c.status === 'running');
      if (running.length === count && running.every((c) => c.health === 'healthy')) return running;
      if (Date.now() > deadline) {
        throw new Error(
          `${service}: wanted ${count} healthy, have ${running.map((c) => `${c.name} ${c.health}`).join(', ') || 'none'}`,
        );
      }
      await sleep(250);
    }
  }

  /**
   * Keeps every log line of the project's containers in `dir` (`<container>-<id>.log`), from each
   * start until the container is gone: a deploy removes the container it replaces, and its log
   * with it. Returns the function that stops following.
   */
  followLogs(dir: string): () => void {
    mkdirSync(dir, { recursive: true });
    const followers = new Set<ChildProcess>();
    const events = spawn(
      this.docker,
      [
        'events',
        '--filter',
        'type=container',
        '--filter',
        'event=start',
        '--filter',
        `label=com.docker.compose.project=${need('COMPOSE_PROJECT_NAME')}`,
        '--format',
        '{{.Actor.ID}} {{.Actor.Attributes.name}} {{.TimeNano}}',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let pending = '';
    events.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [id, name, nanos] = line.split(' ');
        if (!id || !name || !nanos) continue;
        const since = (Number(BigInt(nanos) / 1_000_000n) / 1000).toFixed(3);
        const file = openSync(join(dir, `${name}-${id.slice(0, 12)}.log`), 'a');
        const follower = spawn(this.docker, ['logs', '--follow', '--timestamps', '--since', since, id], {
          stdio: ['ignore', file, file],
        });
        followers.add(follower);
        follower.on('close', () => {
          followers.delete(follower);
          closeSync(file);
        });
      }
    });
    return () => {
      events.kill();
      for (const f of followers) f.kill();
    };
  }

  /** A container's log lines (stdout and stderr) since `sinceMs` (epoch milliseconds). */
  async logs(container: string, sinceMs?: number): Promise<string[]> {
    const since = sinceMs === undefined ? [] : ['--since', new Date(sinceMs).toISOString()];
    const r = await run(this.docker, ['logs', ...since, container]);
    if (r.code !== 0) throw new Error(`docker logs ${container}: ${r.stderr}`);
    return `${r.stdout}\n${r.stderr}`.split('\n').filter(Boolean);
  }
}

export function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (scripts/compose-e2e.sh sets it)`);
  return value;
}
