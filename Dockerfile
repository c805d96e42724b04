# syntax=docker/dockerfile:1
# The image of every deployable package: the gateway and the three services (the pipelines image
# also runs the run worker, with another command). Build from the repository root, naming the
# package and its ports; docker-compose.yml passes them for each image (`docker compose build events`):
#   docker build --build-arg PACKAGE=@platform/events --build-arg PORT_VARIABLE=EVENTS_PORT \
#     --build-arg PORT=4001 --build-arg PORTS="4001 9101" -t platform/events:dev .
# build: the whole workspace with dev dependencies, turbo build (Prisma generate included), then
# `pnpm deploy --prod`; runtime: that deploy's dist/, prisma/ and production node_modules, as `node`.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
# The version package.json pins in "packageManager", from the npm registry (corepack needs to verify it online).
ARG PNPM_VERSION=10.34.8
RUN npm install -g pnpm@${PNPM_VERSION} && npm cache clean --force
ENV TURBO_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
WORKDIR /repo
# Packages come from the lockfile alone, so this layer survives code changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch --store-dir=/pnpm/store
COPY . .
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm install --frozen-lockfile --offline --store-dir=/pnpm/store
# The package to build, e.g. @platform/events. Declared only here, so the layers above are the same
# for every image and built once.
ARG PACKAGE
RUN test -n "${PACKAGE}" || { echo 'PACKAGE is not set: build with --build-arg PACKAGE=@platform/<name> (see docker-compose.yml)' >&2; exit 1; }
# `generate` runs first: the Prisma client goes to src/generated/prisma and tsc compiles it into dist/generated/prisma.
RUN pnpm turbo run build --filter=${PACKAGE}...
# The package's files (dist/, prisma/migrations) and its production dependencies only, workspace
# packages copied in. --legacy: the workspace does not set inject-workspace-packages (pnpm 10).
# --ignore-scripts: everything is built; no dependency needs an install script at run time.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm --filter=${PACKAGE} deploy --prod --legacy --offline --ignore-scripts --store-dir=/pnpm/store /deploy

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# Every process listens on HOST, 127.0.0.1 unless set: inside a container that is the container
# itself, out of reach of probes, other containers and the published ports.
ENV HOST=0.0.0.0
WORKDIR /app
# Owned by root and read-only to the `node` user that runs the process.
COPY --from=build /deploy/package.json ./package.json
COPY --from=build /deploy/node_modules ./node_modules
COPY --from=build /deploy/dist ./dist
# SQL migrations for `node dist/migrate.js` (the migration Job and the compose migrate-* service).
COPY --from=build /deploy/prisma ./prisma
USER node
# The variable of the port that answers /healthz and its default (the package's src/config.ts), and
# every port the package's processes listen on: the API's, METRICS_PORT (GET /metrics, never on the
# gateway's public port), and for pipelines the run worker's (PIPELINES_WORKER_PORT and its METRICS_PORT).
ARG PORT_VARIABLE
ARG PORT
ARG PORTS
EXPOSE ${PORTS}
# The HEALTHCHECK runs in the container, where build arguments are gone: it reads these, and follows
# the port variable when the container sets it.
ENV HEALTHCHECK_PORT_VARIABLE=${PORT_VARIABLE} HEALTHCHECK_PORT=${PORT}
# The slim image has no curl: Node fetch. Kubernetes ignores this and uses its probes.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env[process.env.HEALTHCHECK_PORT_VARIABLE] || process.env.HEALTHCHECK_PORT) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The API; the pipelines run worker is `node --enable-source-maps dist/worker.js`. (The admin CLI,
# packages/cli, is in no image: it runs from a clone.)
CMD ["node", "--enable-source-maps", "dist/main.js"]
