# A bad release for scripts/swarm-e2e.sh: a service's image whose process runs and listens, but
# whose /readyz never answers 200, so its health check never passes. Swarm must roll it back.
ARG BASE
FROM ${BASE}
CMD ["node", "-e", "require('node:http').createServer((_, res) => { res.statusCode = 503; res.end('{\"error\":\"never ready\"}'); }).listen(process.env.PORT)"]
