#!/usr/bin/env node
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { GATEWAY_VERSION, createGateway, type Gateway } from './app.js';
import { workerCount } from './config/cluster.js';
import { ConfigError, loadConfig } from './config/load.js';
import { checkConfig, describeChecked } from './gateway/config-check.js';
import { PinCommandError, pinDefinitions } from './gateway/pin-command.js';
import { describeChanges } from './config/pin-diff.js';
import { PinLockError } from './config/pin-lock.js';
import type { GatewayConfig } from './config/schema.js';
import { watchConfigFile } from './config/watch.js';
import { createLogger, type Logger } from './observability/logger.js';
import { followPrimary, isReplacementWorker, reportListening, runPrimary } from './workers.js';

const USAGE = `Usage: mcp-gateway [--config FILE] [--check]
       mcp-gateway pin --config FILE

  -c, --config FILE   gateway config (YAML or JSON); also MCPGW_CONFIG.
                      Without one: in-memory sessions and the bundled example upstreams.
      --check         validate the config (schema, cross-checks, \${VAR}s, readable files,
                      stdio commands on PATH; the upstreams are started to list what they offer:
                      name and URI collisions, servers' overrides; globs selecting nothing warn)
                      and exit: 0 when the gateway would accept it, 2 naming every problem,
                      1 when the check itself could not run
  pin                 start the upstreams, list their tools and prompts, write the pin lock
                      (pinning.lockFile) with their digests and print what changed; exit 0
                      (2: a config or lock problem, 1: the upstreams could not be listed).
                      Then reload the gateway (SIGHUP) to serve what was pinned
  -h, --help          show this help
  -v, --version       show the version

Environment: MCPGW_CONFIG, MCPGW_HOST, MCPGW_PORT, MCPGW_LOG_LEVEL override the file.

Reload: SIGHUP, or a change of the config file (its directory is watched, so a Kubernetes
ConfigMap update counts), loads the file again and applies what changed; sessions stay.`;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        config: { type: 'string', short: 'c' },
        check: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const args = parsed.values;
  const [command, ...extra] = parsed.positionals;
  if ((command !== undefined && command !== 'pin') || extra.length > 0) {
    process.stderr.write(`unknown command: ${parsed.positionals.join(' ')}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${GATEWAY_VERSION}\n`);
    return 0;
  }

  const file = args.config ?? process.env.MCPGW_CONFIG;
  let config;
  try {
    config = loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`mcp-gateway: ${file ?? 'default configuration'}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (args.check) return check(config, file);
  if (command === 'pin') return pin(config, file);

  const log = createLogger(config.logLevel);
  const workers = workerCount(config.cluster);
  if (workers > 1 && cluster.isPrimary) return runPrimary(workers, log, GATEWAY_VERSION);
  // Signals are handled from here on, so one that arrives during start-up still stops the
  // upstreams that have been started instead of orphaning them.
  let gateway: Gateway | undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    if (!gateway) return; // start-up finishes, sees `stopping`, and closes
    // The drain is bounded; if anything still hangs after it, exit rather than linger.
    setTimeout(() => {
      log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.shutdown.drainMs + 15_000).unref();
    gateway.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const reload = watchForReloads(file, config, log, () => (stopping ? 'stopping' : gateway));
  if (cluster.isWorker) {
    // The primary passes SIGINT, SIGTERM and SIGHUP on (see workers.ts): a Ctrl-C that reached
    // the whole process group must not count twice. A SIGTERM sent to this worker alone stops it.
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', () => stop('SIGTERM'));
    followPrimary((signal) => stopping || stop(signal), reload);
  } else {
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  }

  try {
    gateway = await createGateway(config, { logger: log, ...(file ? { configFile: file } : {}) });
  } catch (err) {
    return startFailed(log, err);
  }
  gateway.configStatus.setSource(file ?? null);
  if (stopping) {
    await gateway.close();
    return 0;
  }
  return serve(gateway, config, log, () => stopping);
}

/**
 * --check: the file, then what reload checks too (checkConfig): commands on PATH, and, with the
 * upstreams started just to list what they offer (nothing listens, no session store is
 * touched), collisions and the virtual servers' overrides and globs.
 */
async function check(config: GatewayConfig, file: string | undefined): Promise<number> {
  const name = file ?? 'default configuration';
  let outcome;
  try {
    outcome = await checkConfig(config, { log: createLogger(process.env.MCPGW_LOG_LEVEL ?? 'silent') });
  } catch (err) {
    // The check itself failed (not a verdict on the config): said in a line, as a failed start is.
    process.stderr.write(
      `mcp-gateway: ${name}: the check failed: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return 1;
  }
  const { errors, warnings } = outcome;
  for (const w of warnings) process.stderr.write(`mcp-gateway: ${name}: warning: ${w}\n`);
  if (errors.length > 0) {
    process.stderr.write(`mcp-gateway: ${name}: invalid configuration:\n${errors.map((e) => `  - ${e}`).join('\n')}\n`);
    return 2;
  }
  const upstreams = config.upstreams.map((u) => u.name).join(', ');
  const servers = config.servers.length > 0 ? `; servers: ${config.servers.map((s) => s.path).join(', ')}` : '';
  process.stdout.write(
    `mcp-gateway: ${name}: OK (${config.upstreams.length} upstream(s): ${upstreams}${servers}; sessions: ` +
      `${config.sessions.store}; auth: ${config.auth.mode})\n`,
  );
  process.stdout.write(
    describeChecked(outcome.checked)
      .map((line) => `  ${line}\n`)
      .join(''),
  );
  return 0;
}

/** `pin`: the lock written, and what changed printed (gateway/pin-command.ts). */
async function pin(config: GatewayConfig, file: string | undefined): Promise<number> {
  const name = file ?? 'default configuration';
  let outcome;
  try {
    outcome = await pinDefinitions(config, { log: createLogger(process.env.MCPGW_LOG_LEVEL ?? 'silent') });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`mcp-gateway: ${name}: pin failed: ${message}\n`);
    return err instanceof PinCommandError || err instanceof PinLockError ? 2 : 1;
  }
  for (const u of outcome.missing)
    process.stderr.write(`mcp-gateway: ${name}: warning: upstream "${u}" did not come up: its pins were kept\n`);
  process.stdout.write(`mcp-gateway: ${outcome.file}: written\n`);
  process.stdout.write(
    describeChanges(outcome.changes)
      .map((line) => `${line}\n`)
      .join(''),
  );
  return 0;
}

/**
 * SIGHUP, and a change of the config file's content: each reloads the gateway (see reloader.ts)
 * once it exists; its reload waits for its start. Set up before the gateway is built: SIGHUP's
 * default action would end the process, and the file's hash is taken as it was loaded. Each
 * replica watches its own file, so a ConfigMap update reaches every one of them.
 */
function watchForReloads(
  file: string | undefined,
  config: GatewayConfig,
  log: Logger,
  gateway: () => Gateway | 'stopping' | undefined,
): () => void {
  const reload = (trigger: 'signal' | 'file'): void => {
    const gw = gateway();
    if (gw === 'stopping') return;
    // Still being built (a moment): a change seen now must not be lost.
    if (!gw) return void setTimeout(() => reload(trigger), 500).unref();
    gw.reload(trigger).catch((err: unknown) =>
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'config reload failed'),
    );
  };
  // In a worker, the primary forwards SIGHUP as a message (workers.ts); one sent to the worker itself reloads it too.
  process.on('SIGHUP', () => reload('signal'));
  const { watch, debounceMs, pollSeconds } = config.reload;
  if (!file || !watch) return () => reload('signal');
  // The policy file as the config at start names it: its edit reloads as the config's does.
  for (const watched of [file, config.authorization?.policyFile].filter((f) => f !== undefined))
    watchConfigFile(watched, () => reload('file'), {
      debounceMs,
      pollMs: pollSeconds * 1000,
      onError: (err) =>
        log.warn({ file: watched, err: err.message }, 'config file watch failed; SIGHUP and the poll still reload'),
    });
  return () => reload('signal');
}

/**
 * The port first: liveness answers at once, and /readyz says "starting" until the upstreams are
 * up. Except for a worker that replaces one that died (workers.ts): its siblings answer
 * meanwhile, and the primary would hand it connections as soon as it listens, so its upstreams
 * start first. -1: keep running.
 */
async function serve(gateway: Gateway, config: GatewayConfig, log: Logger, stopping: () => boolean): Promise<number> {
  const startFirst = isReplacementWorker();
  if (startFirst) {
    const code = await startUpstreams(gateway, log, stopping);
    if (code !== undefined) return code;
  }
  let url: URL;
  try {
    const address = await gateway.app.listen({
      host: config.listen.host,
      port: config.listen.port,
      backlog: config.listen.backlog,
      // Fastify's own line would say "Server listening at …" while MCP is not served yet, and
      // scripts wait for "listening" (the README says so): it must come only with the line below.
      listenTextResolver: (bound) => `port bound at ${bound}: health answers, upstreams starting`,
    });
    url = new URL(config.path, address.replace('0.0.0.0', '127.0.0.1'));
    // Not the endpoint's URL yet: scripts wait for the "listening" line below to send MCP traffic.
    if (!startFirst)
      process.stdout.write(
        `mcp-gateway ${GATEWAY_VERSION} starting: health on ${new URL('/healthz', url).href}, upstreams starting\n`,
      );
  } catch (err) {
    log.fatal({ err: (err as Error).message }, 'cannot listen');
    await gateway.close();
    return 1;
  }
  if (!startFirst) {
    const code = await startUpstreams(gateway, log, stopping);
    if (code !== undefined) return code;
  }
  if (stopping()) return -1;
  // A worker's primary says it once every worker serves.
  if (cluster.isWorker) reportListening(url.href);
  else process.stdout.write(`mcp-gateway ${GATEWAY_VERSION} listening: MCP endpoint ${url.href}\n`);
  return -1; // keep running
}

/** The upstreams' start; an exit code when it failed (-1: a signal stopped it, its handler exits). */
async function startUpstreams(gateway: Gateway, log: Logger, stopping: () => boolean): Promise<number | undefined> {
  try {
    await gateway.start();
    return undefined;
  } catch (err) {
    if (stopping()) return -1;
    const code = startFailed(log, err);
    // Bounded: the upstreams still starting are stopped, but an exit must not wait on one that hangs.
    await Promise.race([gateway.close(), new Promise((r) => setTimeout(r, 10_000))]);
    return code;
  }
}

/**
 * A start-up that cannot succeed (a catalog collision, Redis unreachable): said on stderr too, where --check and config
 * errors go.
 */
function startFailed(log: Logger, err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  log.fatal({ err: message }, 'gateway failed to start');
  process.stderr.write(`mcp-gateway: failed to start: ${message}\n`);
  return 1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`mcp-gateway: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
