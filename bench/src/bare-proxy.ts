/**
 * The baseline for the gateway hop: a bare keep-alive proxy, the least a Node proxy can do.
 * argv: listen port, upstream base URL.
 */
import { Agent, createServer, request } from 'node:http';

const [port, upstream] = [Number(process.argv[2]), new URL(process.argv[3] ?? '')];
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

createServer((req, res) => {
  const out = request(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent },
    (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      upstreamRes.pipe(res);
    },
  );
  out.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(out);
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n')).keepAliveTimeout = 65_000;
