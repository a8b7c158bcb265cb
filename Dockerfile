# syntax=docker/dockerfile:1
#
# toolgate container image.
#   docker build -t toolgate .                       (Node 24, the default)
#   docker build --build-arg NODE_MAJOR=22 -t toolgate:node22 .
#
# Stages: build (all deps; tsc -> dist/, then esbuild bundles the server into
# dist/serve.js), deps (production node_modules only),
# runtime (dist/ + production node_modules + package.json, tini, non-root).
# The runtime works with a read-only root file system: only /workspace (the
# volume) and /tmp must be writable.

ARG NODE_MAJOR=24

# ---------------------------------------------------------------- build ----
FROM node:${NODE_MAJOR}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts are needed to build: tsc is JavaScript, and esbuild's binary
# comes with its platform package (@esbuild/linux-x64 or -arm64, an optional
# dependency); its postinstall only verifies that binary (or fetches it where
# optional dependencies were left out).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.client.json ./
COPY scripts/bundle.mjs ./scripts/
COPY src ./src
RUN npm run build

# ----------------------------------------------------------------- deps ----
FROM node:${NODE_MAJOR}-bookworm-slim AS deps
WORKDIR /src
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# npm leaves empty scope directories of omitted dev packages behind: prune them.
RUN npm ci --omit=dev --no-audit --no-fund \
 && find node_modules -depth -type d -empty -delete \
 && rm -rf /root/.npm

# -------------------------------------------------------------- runtime ----
FROM node:${NODE_MAJOR}-bookworm-slim AS runtime

# tini as PID 1: forwards SIGTERM/SIGINT to node (graceful shutdown) and reaps
# zombies. bubblewrap (and util-linux's prlimit) run run_command's sandbox when
# TOOLGATE_EXEC=sandboxed; slirp4netns and nftables (with util-linux's unshare)
# give a run its filtered network when TOOLGATE_EXEC_NETWORK=true
# (docs/run-command.md); off, none of them is ever started.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini bubblewrap util-linux slirp4netns nftables \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*

# The workspace volume; owned by the node user (uid/gid 1000) so that a fresh
# named volume is writable for it.
RUN mkdir -p /workspace && chown node:node /workspace

WORKDIR /app
# dist/serve.js is the bundle (main.js imports it); tsc's other files serve the
# CLI's other commands. The bundle loads its externals (@fastify/swagger-ui and
# its static files, thread-stream, pino-pretty, ioredis, yaml) from these
# production node_modules.
COPY --from=deps --chown=root:root /src/node_modules ./node_modules
COPY --from=build --chown=root:root /src/dist ./dist
COPY --chown=root:root package.json ./

# MALLOC_ARENA_MAX: glibc keeps one malloc arena per thread (event loop, thread pool, search workers),
# each holding on to what it freed; two arenas cut the resident set under mixed load by about 30 MiB
# (bench/README.md, hot spot 7) at the same throughput.
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    TOOLGATE_HOST=0.0.0.0 \
    TOOLGATE_PORT=8080 \
    TOOLGATE_ROOT=/workspace

USER node
VOLUME /workspace
EXPOSE 8080

# Liveness only (/readyz may be 503 during shutdown or with a read-only volume).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TOOLGATE_PORT||8080)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
