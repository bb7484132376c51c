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

# Runtime dependencies: `npm prune --omit=dev` removes the devDependencies from node_modules.
# But the bundled example upstreams (examples/echo, examples/slow, examples/conformance) import
# @modelcontextprotocol/sdk and zod, which are devDependencies in the repository because the
# gateway itself never imports them -- and the image's default command serves those examples.
# So, in this build stage's copy of package.json only, the SDK moves to "dependencies" (same
# pinned version) before the prune; zod stays as the SDK's required peer. Nothing is
# downloaded: the prune keeps what `npm ci` installed from the lockfile, at the lockfile's
# versions. The image's package.json therefore lists the SDK as a dependency, which is what
# the image runs. The import check fails the build if either is missing. Cost: ~25 MB (the
# SDK v1 brings express and hono); an image that fronts only your own upstreams can drop the
# `npm pkg` part. (If the SDK ever becomes a dependency, `npm pkg get` prints {} and it is skipped.)
RUN SDK_VERSION="$(npm pkg get 'devDependencies.@modelcontextprotocol/sdk' | tr -d '"')" \
 && if [ "$SDK_VERSION" != "{}" ]; then \
      npm pkg set "dependencies.@modelcontextprotocol/sdk=${SDK_VERSION}" \
      && npm pkg delete 'devDependencies.@modelcontextprotocol/sdk'; \
    fi \
 && npm prune --omit=dev --no-audit --no-fund \
 && node -e "import('@modelcontextprotocol/sdk/server/mcp.js').then(() => import('zod'))" \
 && npm cache clean --force

# --- runtime --------------------------------------------------------------------------------
FROM node:22-bookworm-slim AS runtime

# tini as PID 1: it forwards SIGTERM to the gateway (which drains, then stops its upstream
# process groups) and reaps orphaned grandchildren of upstream processes, which Node as
# PID 1 would leave as zombies. jemalloc: with glibc's allocator the gateway's RSS stays
# ~15 % above its baseline after thousands of streams close (fragmentation: the V8 heap is
# back within 1 MB); with jemalloc it returns to within ~5 % (load/, idle-sessions).
# bubblewrap: `bwrap`, which runs stdio upstreams that have a `sandbox` (docs/sandbox.md). Not
# setuid: it needs the host to allow unprivileged user namespaces (and the container's
# seccomp/AppArmor profile to allow unshare); without that a sandboxed upstream is a start-up error.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini libjemalloc2 bubblewrap \
 && bwrap --version \
 && ln -s /usr/lib/*-linux-gnu/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2 \
 && rm -rf /var/lib/apt/lists/*

# Optional: Python 3 and uv, for upstreams run with `uvx` (the many MCP servers on PyPI):
#   docker build --build-arg WITH_UV=true -t mcp-gateway:0.1.0-uv .
# uv comes from PyPI at the pinned UV_VERSION (bump it deliberately). uvx keeps its cache and
# tools under $HOME (~/.cache/uv, ~/.local/share/uv): give the container a writable $HOME
# (the Helm chart's `home` emptyDir, compose's tmpfs, or `docker run --tmpfs /home/node`).
# Python comes from Debian (3.11); a server that needs a newer one makes uv download it there.
ARG WITH_UV=false
ARG UV_VERSION=0.8.0
RUN case "$WITH_UV" in \
      false) ;; \
      true) apt-get update \
        && apt-get install -y --no-install-recommends python3 python3-pip python3-venv \
        && pip3 install --no-cache-dir --break-system-packages "uv==${UV_VERSION}" \
        && uv --version && uvx --version \
        && rm -rf /var/lib/apt/lists/* ;; \
      *) echo "WITH_UV must be true or false, not '$WITH_UV'" >&2; exit 1 ;; \
    esac

ENV NODE_ENV=production \
    LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 \
    MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:1000
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
