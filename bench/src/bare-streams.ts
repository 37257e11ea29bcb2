/**
 * The floor under scenario 13's memory per stream: a bare `node:http` server, no framework, that
 * answers every request with an event stream's head and first line and holds it open. Run by the
 * bench under the same Node flags as the system; prints its port once it listens.
 */
import { createServer, type ServerResponse } from 'node:http';

const held = new Set<ServerResponse>();
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(': open\n\n');
  held.add(res);
  res.on('close', () => held.delete(res));
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
