# The image of one deployable workspace (a service or the gateway); each is its own image:
#   docker build --build-arg WORKSPACE=services/posts --build-arg PORT=4002 .
# (docker-compose.yml passes both.) Build context: the repository root, because every workspace
# depends on libs/. The tooling (dev/, tests/, bench/) is never copied: no image installs it, and
# npm skips the workspaces it does not find.
#
# The build stage does not depend on WORKSPACE, so it is the same for every image: the engine
# installs the workspace and compiles all of it once, and the other images find it in the layer
# cache. Each image then gets only its own workspace's compiled files and production dependencies,
# and runs as the unprivileged `node` user.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json ./
COPY libs ./libs
COPY services ./services
# The client library: the gateway's web client is built on it (and bundles it).
COPY clients ./clients
COPY gateway ./gateway
# `npm install`, not `npm ci`, for the lockfile reason given in scripts/setup.sh.
RUN npm install --no-audit --no-fund --loglevel=error
RUN npm run build --workspaces --if-present \
 && mkdir /manifests && find . -name package.json -not -path '*/node_modules/*' -exec cp --parents {} /manifests \;

FROM node:24-bookworm-slim
ARG WORKSPACE
ARG PORT
ENV NODE_ENV=production PORT=${PORT} MAIN=${WORKSPACE}/dist/src/server.js NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
# npm reads every workspace's manifest, then installs only this workspace's production tree.
COPY --from=build /manifests ./
COPY --from=build /app/package-lock.json ./
COPY --from=build /app/libs ./libs
COPY --from=build /app/${WORKSPACE} ./${WORKSPACE}
RUN test -f "$MAIN" \
 && npm install --omit=dev --workspace="$WORKSPACE" --no-audit --no-fund --ignore-scripts --loglevel=error \
 && npm cache clean --force
USER node
EXPOSE ${PORT}
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The revision deployed (Compose passes REVISION); last, so a new one costs one small layer.
ARG REVISION=unknown
LABEL org.opencontainers.image.revision=${REVISION}
CMD ["sh", "-c", "exec node \"$MAIN\""]
