// @ts-check
// Other stdio→Streamable HTTP bridges, for comparison only. They are installed outside the
// project's dependencies, into load/.peers/ (git-ignored), on first use.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ECHO_SERVER, ROOT } from './gateway.mjs';
import { LOOPBACK, descendants, freePort, start } from './processes.mjs';

export const PEERS_DIR = join(ROOT, 'load/.peers');
/** Makes a server that listens without a host listen on 127.0.0.1 instead of every interface. */
const LOOPBACK_PRELOAD = join(ROOT, 'load/lib/loopback-only.cjs');

/**
 * Exact versions, so a report can be reproduced.
 * @type {Record<string, string>}
 */
export const PEER_VERSIONS = { supergateway: '4.0.0', 'mcp-proxy': '6.7.19' };

/** @param {string} pkg */
export function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/**
 * Installs the peers into load/.peers/ unless the pinned versions are there already.
 * @param {(msg: string) => void} log
 */
export function ensurePeers(log) {
  const missing = Object.entries(PEER_VERSIONS)
    .filter(([pkg, v]) => installedVersion(pkg) !== v)
    .map(([pkg, v]) => `${pkg}@${v}`);
  if (missing.length === 0) return;
  mkdirSync(PEERS_DIR, { recursive: true });
  const args = ['install', '--prefix', PEERS_DIR, '--no-audit', '--no-fund', '--save-exact', ...missing];
  log(`installing peers (comparison only, outside the project's dependencies): npm ${args.join(' ')}`);
  const r = spawnSync('npm', args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  if (r.status !== 0) throw new Error(`npm install of ${missing.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

/**
 * @typedef {object} PeerSpec
 * @property {string} name
 * @property {string} notes   how it runs the upstream, for the report
 * @property {(port: number) => string[]} args   node arguments after the preload
 */

/** @type {PeerSpec[]} */
export const PEERS = [
  {
    name: 'supergateway',
    notes:
      'stdio→Streamable HTTP, --stateful: one echo child per session, spawned through a shell (so 50 sessions = 100 upstream processes); SSE replies; --logLevel none',
    args: (port) => [
      join(PEERS_DIR, 'node_modules/supergateway/dist/index.js'),
      '--stdio',
      `${process.execPath} ${ECHO_SERVER}`,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--streamableHttpPath',
      '/mcp',
      '--logLevel',
      'none',
    ],
  },
  {
    name: 'mcp-proxy',
    notes:
      'one shared echo child for all sessions (an SDK Client), a per-session SDK server; SSE replies; default event store on',
    args: (port) => [
      join(PEERS_DIR, 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs'),
      '--host',
      LOOPBACK,
      '--port',
      String(port),
      '--server',
      'stream',
      '--',
      process.execPath,
      ECHO_SERVER,
    ],
  },
];

/**
 * @param {number} port
 * @param {number} timeoutMs
 */
async function waitForPort(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = connect(port, LOOPBACK);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${LOOPBACK}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** @param {PeerSpec} spec */
export async function startPeer(spec) {
  const port = await freePort();
  const { proc } = await start({
    name: spec.name,
    command: process.execPath,
    args: ['--require', LOOPBACK_PRELOAD, ...spec.args(port)],
    cwd: ROOT,
  });
  try {
    await Promise.race([
      waitForPort(port, 30_000),
      proc.exited.then((code) => {
        throw new Error(`${spec.name} exited with ${code}: ${proc.output().slice(-1500)}`);
      }),
    ]);
  } catch (err) {
    await proc.stop(2000);
    throw err;
  }
  return {
    url: `http://${LOOPBACK}:${port}/mcp`,
    pid: proc.pid,
    version: installedVersion(spec.name),
    pids: () => [proc.pid],
    upstreamPids: () => descendants(proc.pid),
    output: proc.output,
    stop: () => proc.stop(5000),
  };
}
