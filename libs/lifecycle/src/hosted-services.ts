/**
 * The services a process hosts for its own parts (the one-process mode, server/): each one's app
 * behind an HTTP server that listens on no port, reached through an agent whose connections are
 * made in memory (memory-socket.ts). A request to a hosted service goes through the same HTTP client
 * and server as over the network (the gateway's proxy, its timeouts and header rules, the
 * service's parser and keep-alive), only without a socket. Anything not hosted is reached over the
 * network.
 *
 * Whoever runs the parts makes one, hosts the services in it, and hands it to every part that
 * calls another (`ServiceReach`): nothing of it is global to the process.
 */
import { Agent, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { createHttpServer, type HttpApp } from './http-server';
import { MemorySocket } from './memory-socket';
import { fetchThrough, networkFetch, type ServiceFetch } from './service-fetch';

/** How a process reaches our services: in memory those it hosts, the others over the network. */
export interface ServiceReach {
  /** `fetch`, for calls to a service. */
  fetch: ServiceFetch;
  /** The agent that reaches the service at `url` in memory; undefined when it is over the network. */
  agentFor(url: string): Agent | undefined;
}

/** Every service over the network: a process that runs one part. */
export const overTheNetwork: ServiceReach = { fetch: networkFetch, agentFor: () => undefined };

/** The address of a service hosted in this process: a name no DNS answers, so never a socket. */
export function inProcessUrl(name: string): string {
  return `http://${name}.in-process`;
}

/** An agent whose every connection is a fresh one in memory to `server`. */
class InMemoryAgent extends Agent {
  constructor(
    private readonly server: Server,
    private readonly accepted: Set<Duplex>,
  ) {
    // Idle connections are retired as the gateway's pool retires them, long before the service would.
    super({ keepAlive: true, timeout: 4_000 });
  }

  override createConnection(): Duplex {
    const [client, service] = MemorySocket.pair();
    this.accepted.add(service);
    service.once('close', () => this.accepted.delete(service));
    this.server.emit('connection', service);
    return client;
  }
}

export class HostedServices implements ServiceReach {
  private readonly byOrigin = new Map<string, { agent: Agent; fetch: ServiceFetch; close(): void }>();

  /** Serves `app` at `inProcessUrl(name)` until close(). */
  host(name: string, app: HttpApp, { keepAliveTimeoutMs }: { keepAliveTimeoutMs: number }): string {
    const url = inProcessUrl(name);
    if (this.byOrigin.has(url)) throw new Error(`${name} is already hosted in this process`);
    const server = createHttpServer(app.callback(), keepAliveTimeoutMs);
    const accepted = new Set<Duplex>();
    const agent = new InMemoryAgent(server, accepted);
    const close = () => {
      agent.destroy();
      for (const socket of accepted) socket.destroy();
    };
    this.byOrigin.set(url, { agent, fetch: fetchThrough(agent), close });
    return url;
  }

  readonly fetch: ServiceFetch = (url, init) => {
    const hosted = this.byOrigin.get(new URL(url).origin);
    return hosted ? hosted.fetch(url, init) : networkFetch(url, init);
  };

  agentFor(url: string): Agent | undefined {
    return this.byOrigin.get(new URL(url).origin)?.agent;
  }

  /** Ends every connection to the hosted services. */
  close(): void {
    for (const hosted of this.byOrigin.values()) hosted.close();
    this.byOrigin.clear();
  }
}
