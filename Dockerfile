# syntax=docker/dockerfile:1
# One Dockerfile for the four services, built from the repository root (the pnpm workspace is the
# build context); SERVICE (gateway, search, upload or worker) picks the service:
#   docker build --build-arg SERVICE=gateway -t comfy-registry-assets/gateway .
# The stages up to `runtime` are the same for every service (and cached once for all four); each
# service's own stage adds only its port and its node flags.
ARG NODE_IMAGE=node:20-slim
ARG SERVICE

FROM ${NODE_IMAGE} AS workspace
ENV CI=true
# A compiler for better-sqlite3 when its prebuilt binary cannot be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@12.21.0
WORKDIR /repo
# The lockfile alone decides what is downloaded, so this layer stays cached until it changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile --ignore-scripts

FROM workspace AS build
ARG SERVICE
# Compile to dist/: the entry points bundled with the workspace packages they import (esbuild at
# the lockfile's version, through @app/build); npm packages stay imports. The gateway also serves
# the web page at / (services/web/dist, which deploy copies in as @app/web's files).
RUN if [ "${SERVICE}" = gateway ]; then pnpm --filter @app/web build; fi && pnpm --filter @app/${SERVICE} build
# One self-contained folder: dist/ and the production dependencies, laid out flat (hoisted) so
# the bundle's imports of npm packages resolve from dist/. No symlinks out of /out.
RUN pnpm --filter @app/${SERVICE} --prod --offline --config.node-linker=hoisted deploy /out
# better-sqlite3 (the asset records' SQLite) is native: the install above ran no scripts, so it is
# built here, in the deployed folder of the services that carry it (its prebuilt binary when
# GitHub is reachable, else from source).
RUN cd /out && if [ -d node_modules/better-sqlite3 ]; then npm rebuild better-sqlite3; fi

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
COPY --from=build /out ./
RUN mkdir -p /data && chown 1000:1000 /data
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data
# uid 1000 is the image's `node` user; numeric so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# Liveness only: orchestrators that need readiness (compose, Kubernetes) probe /readyz themselves.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# Each service: its port, and its start script's node flags. Compiled JavaScript in one node
# process (no tsx, no pnpm in front), so SIGTERM reaches serve()'s drain. V8 flags go on the
# command line (set at run time they are undefined behaviour): the processes that take uploads
# let the heap grow 200 % after each full GC, so the bytes in flight do not start one every
# 15–20 MB; those that serve search run without allocation-site pretenuring.
FROM runtime AS service-gateway
ENV PORT=8080
EXPOSE 8080
CMD ["node", "--heap-growing-percent=200", "--no-allocation-site-pretenuring", "dist/main.js"]

FROM runtime AS service-search
ENV PORT=8081
EXPOSE 8081
CMD ["node", "--no-allocation-site-pretenuring", "dist/main.js"]

FROM runtime AS service-upload
ENV PORT=8082
EXPOSE 8082
CMD ["node", "--heap-growing-percent=200", "dist/main.js"]

FROM runtime AS service-worker
ENV PORT=8083
EXPOSE 8083
CMD ["node", "dist/main.js"]

# The image is the stage of the service SERVICE names; BuildKit builds only the stages it needs.
FROM service-${SERVICE}
