# A local stand-in for node:24-bookworm-slim, built by scripts/compose/standins.sh only where no
# registry can provide the real image: Debian bookworm from Debian's packages (imported as
# content-service-standin/bookworm), the Node 24 binary that npm already installed for the
# project (the `node` package), and npm from the npm registry. Like the real image: node and npm
# in /usr/local/bin, and a `node` user with uid and gid 1000.
#
# Only here, never in the project's Dockerfile: the machine's CA bundle, because TLS to the
# registries is intercepted on the machines this stands in on, and npm must trust that.
FROM content-service-standin/bookworm:local
COPY node /usr/local/bin/node
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ADD npm.tgz /usr/local/lib/node_modules/
RUN mv /usr/local/lib/node_modules/package /usr/local/lib/node_modules/npm \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && echo 'node:x:1000:' >>/etc/group \
 && echo 'node:x:1000:1000::/home/node:/bin/bash' >>/etc/passwd \
 && mkdir -p /home/node && chown 1000:1000 /home/node \
 && node --version && npm --version
ENV NODE_VERSION=24 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
