# syntax=docker/dockerfile:1
#
# mcp-gateway container image.
#
#   docker build -t mcp-gateway:0.1.0 .
#   docker run --rm -p 127.0.0.1:8080:8080 mcp-gateway:0.1.0
#
# The image runs Node 22 (current LTS) although development machines and CI run Node 20:
# the code targets both (engines: >=20.19). For reproducible releases pin the base image by
# digest (node:22-bookworm-slim@sha256:…) in the release pipeline.
# Checked by test/deploy/dockerfile.test.ts (no Docker engine is needed for that test).

# --- build: compile TypeScript, then reduce node_modules to what runs ----------------------
FROM node:22-bookworm-slim AS build
WORKDIR /src

COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# Runtime dependencies. `npm prune --omit=dev` alone would drop @modelcontextprotocol/sdk and
# zod, which are devDependencies because the gateway itself never imports them -- but the
# bundled example upstreams (examples/echo, examples/slow, examples/conformance) do, and the
# image's default command serves those examples. So they are added back here, without
# touching package.json (--no-save), at exactly the versions the lockfile pins (read from
# package.json / package-lock.json, so this line never goes stale); their own dependencies
# resolve to the lockfile's entries too. This costs ~30 MB (the SDK v1 brings express and
# hono). An image that only fronts your own upstreams can drop this RUN line's second half.
RUN npm prune --omit=dev --no-audit --no-fund \
 && npm install --no-save --omit=dev --no-audit --no-fund --ignore-scripts \
      "@modelcontextprotocol/sdk@$(node -p "require('./package.json').devDependencies['@modelcontextprotocol/sdk']")" \
      "zod@$(node -p "require('./package-lock.json').packages['node_modules/zod'].version")" \
 && node -e "import('@modelcontextprotocol/sdk/server/mcp.js').then(() => import('zod'))" \
 && npm cache clean --force

# --- runtime --------------------------------------------------------------------------------
FROM node:22-bookworm-slim AS runtime

# tini as PID 1: it forwards SIGTERM to the gateway (which drains, then stops its upstream
# process groups) and reaps orphaned grandchildren of upstream processes, which Node as
# PID 1 would leave as zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production
# In a container the gateway must listen beyond loopback, or nothing outside the container
# (port publishing, a Kubernetes Service) can reach it. This exposes the MCP endpoint to
# every network the container is attached to, so: publish the port on 127.0.0.1 only
# (`-p 127.0.0.1:8080:8080`) unless something in front authenticates clients; the Origin
# allow-list (security.allowedOrigins, DNS-rebinding protection) still applies to browser
# requests, but it is no authentication: non-browser clients send no Origin and pass.
ENV MCPGW_HOST=0.0.0.0 MCPGW_PORT=8080

WORKDIR /app
# Owned by root and read-only to the gateway's user: the process cannot modify its own code.
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY examples ./examples

# 1000:1000 is the `node` user of the official Node images. Numeric, so that Kubernetes'
# runAsNonRoot can verify it without reading /etc/passwd.
USER 1000:1000

EXPOSE 8080

# Slim images have no curl: Node's own fetch probes the liveness endpoint (loopback works
# because MCPGW_HOST=0.0.0.0 includes it; if you bind one specific address, change this).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MCPGW_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The gateway drains on SIGTERM (shutdown.drainMs, 10 s by default): give it longer than
# that before SIGKILL (`docker stop -t 20`, compose stop_grace_period, Kubernetes
# terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM

ENTRYPOINT ["/usr/bin/tini", "--"]
# The bundled examples (in-memory sessions, upstreams examples/echo and examples/slow, paths
# relative to WORKDIR /app). Mount your own config and pass `--config`, e.g.
#   docker run -v ./gateway.yaml:/etc/mcp-gateway/gateway.yaml:ro mcp-gateway \
#     node dist/main.js --config /etc/mcp-gateway/gateway.yaml
CMD ["node", "dist/main.js", "--config", "/app/examples/gateway.yaml"]
