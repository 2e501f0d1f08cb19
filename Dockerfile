# Atrium: the built server only (esbuild bundles of the API, the worker and the migrator, with the
# production node_modules they load), run as the unprivileged `node` user.
#   docker build -t atrium .                                                    # the API (default target)
#   docker run -v atrium-data:/data -p 8080:8080 atrium                         # embedded storage in /data
#   docker run -e DATABASE_URL=… -e ATRIUM_MASTER_KEY=… -p 8080:8080 atrium     # API over PostgreSQL
#   docker build --target worker -t atrium-worker . && docker run … atrium-worker   # workers (no HTTP, no health check)
#   docker run … atrium node server/dist/migrate.mjs                            # migrations, once per release
# The npm of the node:20 image (npm 10) installs the lockfile as is: no dependency's install script
# needs the network (tests/src/tooling/engines.test.ts). See docs/deployment.md.

# 1. Build: every dependency, then the bundles (server/dist/{main,worker,migrate}.mjs, web/dist).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY db/package.json db/
COPY routers/package.json routers/
COPY rest-facade/package.json rest-facade/
COPY server/package.json server/
COPY web/package.json web/
COPY tests/package.json tests/
COPY patches patches
RUN npm ci --no-audit --no-fund
COPY . .
RUN node server/build.mjs --all && node web/build.mjs

# 2. Production dependencies only (patch-package applies patches/ at install, as in development).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY db/package.json db/
COPY routers/package.json routers/
COPY rest-facade/package.json rest-facade/
COPY server/package.json server/
COPY web/package.json web/
COPY tests/package.json tests/
COPY patches patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. Runtime: the bundles, their node_modules, and the committed migrations (found through the
# @atrium/db workspace link). No TypeScript sources of the API, no dev tools, no shell scripts.
# /app stays root-owned (read-only to the server); what it writes goes to /data, a volume that
# `node` owns: the embedded PGlite database and its generated master.key when DATABASE_URL is unset.
# (A new named volume takes this ownership; a bind mount must be writable by uid 1000.)
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 ATRIUM_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/package.json ./
COPY --from=deps /app/node_modules node_modules
COPY db/package.json db/
COPY db/src/index.ts db/src/
COPY db/migrations db/migrations
COPY --from=build /app/server/dist server/dist
COPY --from=build /app/web/dist web/dist
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
VOLUME /data
USER node

# 4a. The workers (`--target worker`): no HTTP server, so no health check on /readyz.
FROM runtime AS worker
HEALTHCHECK NONE
CMD ["node", "server/dist/worker.mjs"]

# 4b. The API, the default target (last stage), checked on /readyz (the database answers).
FROM runtime AS api
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=6", "--heap-growing-percent=35", "--max-old-space-size=128", "server/dist/main.mjs"]
