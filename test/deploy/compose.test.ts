/**
 * docker-compose.yml, checked without Docker: dclint (the Compose specification's schema and
 * its best-practice rules, all on), and our own rules: ports published on 127.0.0.1 only,
 * healthchecks, the gateway waits for a healthy Redis and uses it, no `deploy.replicas` with a
 * fixed host port, and the mounted gateway config exists and is accepted by the gateway's own
 * resolveConfig with the environment compose gives it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DCLinter } from 'dclint';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ROOT, checkGatewayConfig, missingExampleScripts } from './support.js';

const COMPOSE_FILE = resolve(ROOT, 'docker-compose.yml');
const compose = parseYaml(readFileSync(COMPOSE_FILE, 'utf8')) as { services: Record<string, any> };
const services = compose.services;
const gateway = services.gateway;

const tmp = mkdtempSync(join(tmpdir(), 'mcpgw-compose-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function lint(file: string) {
  // Every rule at its default level (an empty rules map leaves none off).
  const linter = new DCLinter({ rules: {}, quiet: true, debug: false, exclude: [] });
  // (dclint's .d.ts files use extensionless imports that NodeNext cannot follow: typed here.)
  const results = linter.lintFiles([file], false) as { messages: { line: number; rule: string; message: string }[] }[];
  return results.flatMap((r) => r.messages.map((m) => `${m.line}: ${m.rule}: ${m.message}`));
}

/** KEY=VALUE list or mapping -> mapping. */
function environmentOf(service: any): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(env.map((e: string) => [e.split('=')[0], e.slice(e.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

/** The Dockerfile's ENV values (the image's environment, under compose's). */
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const text = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const finalStage = text.slice(text.lastIndexOf('\nFROM '));
  for (const line of finalStage.split('\n')) {
    const m = /^ENV\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const pair of (m[1] as string).matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g))
      env[pair[1] as string] = (pair[2] as string).replace(/^"|"$/g, '');
  }
  return env;
}

describe('docker-compose.yml', () => {
  it('passes dclint (Compose schema + every rule) with no error or warning', () => {
    expect(lint(COMPOSE_FILE)).toEqual([]);
    // Control: dclint does flag what it should.
    const bad = join(tmp, 'docker-compose.yml');
    writeFileSync(bad, 'services:\n  a:\n    image: redis:latest\n    ports:\n      - 8080:8080\n    bogus_key: 1\n');
    expect(lint(bad).join('\n')).toMatch(/invalid-schema/);
    writeFileSync(bad, 'services:\n  a:\n    image: redis:latest\n');
    expect(lint(bad).join('\n')).toMatch(/service-image-require-explicit-tag/);
  });

  it('publishes ports on 127.0.0.1 only (the gateway), and nothing for redis', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const p of svc.ports ?? []) {
        if (typeof p === 'object') expect(p.host_ip, `${name}: ${JSON.stringify(p)}`).toBe('127.0.0.1');
        else expect(String(p), `${name}: ${p}`).toMatch(/^127\.0\.0\.1:\d+:\d+(\/tcp)?$/);
      }
      expect(svc.network_mode, name).toBeUndefined();
      expect(svc.privileged ?? false, name).toBe(false);
    }
    expect(gateway.ports).toEqual(['127.0.0.1:8080:8080']);
    expect(services.redis.ports).toBeUndefined();
  });

  it('a fixed host port and deploy.replicas do not mix (a second replica could not bind it)', () => {
    for (const [name, svc] of Object.entries(services)) {
      const replicas = svc.deploy?.replicas ?? 1;
      const fixed = (svc.ports ?? []).some((p: unknown) => typeof p === 'string' && /^[\d.]+:\d+:/.test(p));
      expect(fixed && replicas > 1, `${name}: replicas ${replicas} with a fixed host port`).toBe(false);
      expect(svc.scale ?? 1, name).toBe(1);
    }
  });

  it('every service has a healthcheck; the gateway starts after redis is healthy', () => {
    for (const [name, svc] of Object.entries(services)) {
      expect(svc.healthcheck?.test, name).toBeDefined();
      expect(svc.healthcheck.disable ?? false, name).toBe(false);
    }
    expect(gateway.healthcheck.test.join(' ')).toMatch(/\/healthz/);
    expect(services.redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(gateway.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
    // Pinned to an exact release (major.minor.patch), never a floating 7-alpine or latest.
    expect(services.redis.image).toMatch(/^redis:7\.\d+\.\d+-alpine$/);
  });

  it('the gateway is hardened: read-only root, writable /tmp and $HOME only (tmpfs), no capabilities, no-new-privileges', () => {
    expect(gateway.read_only).toBe(true);
    expect(gateway.cap_drop).toEqual(['ALL']);
    expect(gateway.security_opt).toContain('no-new-privileges:true');
    expect(gateway.tmpfs).toContain('/tmp');
    // `npx -y` upstreams write ~/.npm and uvx ~/.cache: the image's user (1000, node) has HOME /home/node.
    expect(gateway.tmpfs).toContain('/home/node');
    expect(gateway.volumes.every((v: { read_only?: boolean }) => v.read_only === true)).toBe(true);
    expect(gateway.build).toBeDefined();
  });

  it('mounts deploy/compose/gateway.yaml read-only as the config it runs; the gateway accepts it (redis sessions); stop grace > drain', () => {
    const mounts = (gateway.volumes as any[]).filter((v) => typeof v === 'object' && v.type === 'bind');
    const configMount = mounts.find((v) => v.target === '/etc/mcp-gateway/gateway.yaml');
    expect(configMount).toMatchObject({ source: './deploy/compose/gateway.yaml', read_only: true });
    expect(gateway.command).toEqual(['node', 'dist/main.js', '--config', configMount.target]);

    const env = { ...imageEnv(), ...environmentOf(gateway) };
    expect(env.MCPGW_REDIS_URL).toBe('redis://redis:6379');
    const source = parseYaml(readFileSync(resolve(ROOT, configMount.source), 'utf8'));
    const config = checkGatewayConfig(source, env);
    expect(config.sessions.store).toBe('redis');
    expect(config.sessions.redisUrl).toBe('redis://redis:6379');
    expect(config.listen).toMatchObject({ host: '0.0.0.0', port: 8080 });
    expect(missingExampleScripts(config)).toEqual([]);
    // The published container port is the one the gateway listens on.
    expect(gateway.ports[0].split(':')[2]).toBe(String(config.listen.port));

    // stop_grace_period (e.g. "20s") exceeds the drain.
    const grace = /^(\d+)s$/.exec(gateway.stop_grace_period ?? '10s');
    expect(Number(grace?.[1]) * 1000).toBeGreaterThan(config.shutdown.drainMs);
  });
});
