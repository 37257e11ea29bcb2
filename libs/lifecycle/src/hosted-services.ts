/**
 * The services a process hosts for its own parts (the one-process mode, server/), each reached
 * two ways, both in memory:
 * - the gateway's proxy hands a request to the service's own handler (`handlerFor`): the hot
 *   path, where nothing is written or parsed on the way;
 * - the services' calls to one another, the revocation feed and readiness checks use `fetch`
 *   through an agent whose connections are made in memory (memory-socket.ts) to the service's
 *   HTTP server, which listens on no port: HTTP as over the network (status, headers, keep-alive,
 *   a reader's pace), only without a socket. These calls are few, and small.
 * Anything not hosted is reached over the network.
 *
 * Whoever runs the parts makes one, hosts the services in it, and hands it to every part that
 * calls another (`ServiceReach`): nothing of it is global to the process.
 */
import { Agent, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { createHttpServer, type HttpApp } from './http-server';
import { MemorySocket } from './memory-socket';
import { fetchThrough, networkFetch, type ServiceFetch } from './service-fetch';

/** How a process reaches our services: in memory those it hosts, the others over the network. */
export interface ServiceReach {
  /** `fetch`, for calls to a service. */
  fetch: ServiceFetch;
  /** The handler of the service at `url` when this process hosts it; undefined: over the network. */
  handlerFor(url: string): RequestListener | undefined;
}

/** Every service over the network: a process that runs one part. */
export const overTheNetwork: ServiceReach = { fetch: networkFetch, handlerFor: () => undefined };

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
  private readonly byOrigin = new Map<string, { handler: RequestListener; fetch: ServiceFetch; close(): void }>();

  /** Serves `app` at `inProcessUrl(name)` until close(). */
  host(name: string, app: HttpApp, { keepAliveTimeoutMs }: { keepAliveTimeoutMs: number }): string {
    const url = inProcessUrl(name);
    if (this.byOrigin.has(url)) throw new Error(`${name} is already hosted in this process`);
    const handler = app.callback();
    const server = createHttpServer(handler, keepAliveTimeoutMs);
    const accepted = new Set<Duplex>();
    const agent = new InMemoryAgent(server, accepted);
    const close = () => {
      agent.destroy();
      for (const socket of accepted) socket.destroy();
    };
    this.byOrigin.set(url, { handler, fetch: fetchThrough(agent), close });
    return url;
  }

  readonly fetch: ServiceFetch = (url, init) => {
    const hosted = this.byOrigin.get(new URL(url).origin);
    return hosted ? hosted.fetch(url, init) : networkFetch(url, init);
  };

  handlerFor(url: string): RequestListener | undefined {
    return this.byOrigin.get(new URL(url).origin)?.handler;
  }

  /** Ends every connection to the hosted services. */
  close(): void {
    for (const hosted of this.byOrigin.values()) hosted.close();
    this.byOrigin.clear();
  }
}
