/**
 * The Dockerfile and .dockerignore, checked without a Docker engine: parsed with dockerfile-ast
 * and held to our rules -- multi-stage on a pinned Node 22 slim base (no `latest`), `npm ci`
 * (never `npm install`), a non-root final USER, HEALTHCHECK on /healthz without curl, EXPOSE
 * and ENV agreeing on 8080, and a CMD whose config file is in the repository and accepted by
 * the gateway's own resolveConfig under the image's environment. Building and running the image
 * is not tested here (no Docker engine on these machines).
 */
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DockerfileParser, type Instruction, type JSONInstruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ROOT, checkGatewayConfig, missingExampleScripts, repoPathOfImagePath } from './support.js';

const text = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();
const froms = dockerfile.getFROMs();

/** Instructions per stage, in order; the last is the image. */
const stages: { name: string | null; image: string; body: Instruction[] }[] = [];
for (const ins of instructions) {
  if (ins.getKeyword() === 'FROM') {
    const from = froms.find((f) => f.getRange().start.line === ins.getRange().start.line)!;
    stages.push({ name: from.getBuildStage(), image: from.getImage() ?? '', body: [] });
  } else if (stages.length > 0) {
    stages[stages.length - 1]!.body.push(ins);
  }
}
const final = stages[stages.length - 1]!;
const inFinal = (kw: string) => final.body.filter((i) => i.getKeyword() === kw);
const args = (ins: Instruction) => ins.getArguments().map((a) => a.getValue());
const json = (ins: Instruction) => (ins as JSONInstruction).getJSONStrings().map((s) => s.getJSONValue());

/** The image's environment: ENV of the final stage. */
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of dockerfile.getENVs()) {
    if (!final.body.includes(e)) continue;
    for (const p of e.getProperties()) env[p.getName()] = p.getUnescapedValue() ?? '';
  }
  return env;
}

const runs = instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getRawArgumentsContent() ?? '');

describe('Dockerfile', () => {
  it('is multi-stage on node:22-bookworm-slim, with explicit tags only (no latest)', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = new Set<string>();
    for (const [i, f] of froms.entries()) {
      const image = f.getImage() ?? '';
      if (names.has(image)) continue; // FROM <earlier stage>
      expect(f.getImageName(), image).toBe('node');
      expect(f.getImageTag() ?? f.getImageDigest(), `${image} has a tag or digest`).toBeTruthy();
      expect(f.getImageTag(), image).not.toBe('latest');
      expect(f.getImageTag(), image).toMatch(/^22(\.\d+)*-bookworm-slim$/);
      expect(f.getBuildStage(), `stage ${i} is named`).toBeTruthy();
      names.add(f.getBuildStage() ?? '');
    }
    // The image copies its build from an earlier stage, not from the context.
    const fromStages = inFinal('COPY')
      .map((c) => (c as any).getFromFlag?.()?.getValue())
      .filter(Boolean);
    expect(fromStages.length).toBeGreaterThan(0);
    for (const s of fromStages) expect(names.has(s), `COPY --from=${s}`).toBe(true);
  });

  it('installs with npm ci from the lockfile, never npm install; builds; prunes dev dependencies', () => {
    const all = runs.join('\n');
    expect(all).toMatch(/\bnpm ci\b/);
    expect(all).not.toMatch(/\bnpm (install|i|add)\b/);
    expect(all).toMatch(/\bnpm run build\b/);
    expect(all).toMatch(/\bnpm prune --omit=dev\b/);
    expect(all).not.toMatch(/curl[^\n|]*\|\s*(ba)?sh/);
    expect(instructions.filter((i) => i.getKeyword() === 'ADD')).toEqual([]);
    // Everything the stages COPY from the build context exists and is not .dockerignore'd.
    const ignored = readFileSync(resolve(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const c of dockerfile.getCOPYs()) {
      if ((c as any).getFromFlag?.()) continue;
      const sources = args(c)
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1);
      for (const src of sources) {
        expect(existsSync(resolve(ROOT, src)), `COPY ${src}`).toBe(true);
        expect(ignored, `.dockerignore must not exclude ${src}`).not.toContain(src.replace(/\/$/, ''));
      }
    }
    for (const entry of ['node_modules', 'dist', '.git', '.tools', 'load/.peers', 'coverage', '*.log'])
      expect(ignored).toContain(entry);
  });

  it('the bundled examples find every package they import in the pruned node_modules', () => {
    // The image keeps package.json "dependencies" plus the SDK (moved there before the prune)
    // and the SDK's required peer zod. A new import in examples/ must be one of those.
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8'));
    const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8'));
    const sdk = '@modelcontextprotocol/sdk';
    const sdkLock = lock.packages[`node_modules/${sdk}`];
    expect(sdkLock.peerDependencies?.zod, 'zod is a peer of the SDK').toBeDefined();
    expect(sdkLock.peerDependenciesMeta?.zod?.optional ?? false, 'and not an optional one').toBe(false);
    expect(pkg.dependencies[sdk] ?? pkg.devDependencies[sdk]).toBe(sdkLock.version);
    expect(runs.join('\n')).toContain(`dependencies.${sdk}`);
    const available = new Set([...Object.keys(pkg.dependencies), sdk, 'zod']);
    const builtins = new Set(builtinModules);
    for (const dir of readdirSync(resolve(ROOT, 'examples'), { withFileTypes: true })) {
      if (!dir.isDirectory()) continue;
      for (const file of readdirSync(join(ROOT, 'examples', dir.name)).filter((f) => /\.m?js$/.test(f))) {
        const src = readFileSync(join(ROOT, 'examples', dir.name, file), 'utf8');
        for (const m of src.matchAll(/(?:^|\n)\s*import\s[^'"]*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
          const spec = (m[1] ?? m[2]) as string;
          if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec)) continue;
          const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
          expect(available.has(name), `examples/${dir.name}/${file} imports ${name}`).toBe(true);
        }
      }
    }
  });

  it('runs as a non-root user in /app, listening on 0.0.0.0:8080 with port 8080 exposed', () => {
    const users = inFinal('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = (args(users[users.length - 1]!)[0] ?? '').split(':')[0];
    expect(['', 'root', '0']).not.toContain(user);
    const workdirs = inFinal('WORKDIR').map((w) => args(w)[0]);
    expect(workdirs[workdirs.length - 1]).toBe('/app');
    const env = imageEnv();
    expect(env.MCPGW_HOST).toBe('0.0.0.0');
    expect(env.MCPGW_PORT).toBe('8080');
    const exposed = inFinal('EXPOSE').flatMap(args);
    expect(exposed).toEqual(['8080']);
    expect(inFinal('STOPSIGNAL').flatMap(args)).toEqual(['SIGTERM']);
    // The runtime stage holds what the gateway needs.
    const copied = inFinal('COPY').map((c) => args(c).filter((a) => !a.startsWith('--'))[0]);
    for (const need of ['/src/dist', '/src/node_modules', '/src/package.json', 'examples'])
      expect(copied).toContain(need);
  });

  it('a WITH_UV build arg (false by default) adds Python and a pinned uv for uvx upstreams, and refuses other values', () => {
    const argDefaults = Object.fromEntries(
      inFinal('ARG')
        .flatMap((a) => args(a))
        .map((a) => [a.split('=')[0], a.includes('=') ? a.slice(a.indexOf('=') + 1) : undefined]),
    );
    expect(argDefaults.WITH_UV).toBe('false');
    expect(argDefaults.UV_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    const uvRun = inFinal('RUN')
      .map((r) => r.getRawArgumentsContent() ?? '')
      .find((r) => r.includes('WITH_UV'));
    expect(uvRun, 'a RUN that reads WITH_UV').toBeDefined();
    expect(uvRun).toMatch(/python3/);
    expect(uvRun).toContain('"uv==${UV_VERSION}"');
    expect(uvRun).toMatch(/uvx --version/);
    expect(uvRun).toMatch(/\*\)[^\n]*exit 1/);
    // Installed as root, before the image drops to its user.
    const lines = (i: Instruction) => i.getRange().start.line;
    const lastUser = inFinal('USER').map(lines).pop()!;
    expect(lines(inFinal('RUN').find((r) => (r.getRawArgumentsContent() ?? '').includes('WITH_UV'))!)).toBeLessThan(
      lastUser,
    );
    // And the default build runs the same shell case with WITH_UV=false: nothing installed.
    const sh = spawnSync('sh', ['-c', uvRun!.replace(/\\\n/g, ' ')], {
      env: { WITH_UV: 'false', PATH: process.env.PATH },
      encoding: 'utf8',
    });
    expect(sh.status, sh.stderr).toBe(0);
    const bad = spawnSync('sh', ['-c', uvRun!.replace(/\\\n/g, ' ')], {
      env: { WITH_UV: 'yes', PATH: process.env.PATH },
      encoding: 'utf8',
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/WITH_UV must be true or false/);
  });

  it('installs bubblewrap (bwrap, for sandboxed stdio upstreams) in the runtime stage, from Debian', () => {
    const finalRuns = inFinal('RUN').map((i) => i.getRawArgumentsContent() ?? '');
    expect(finalRuns.some((r) => /apt-get install[^&]*\bbubblewrap\b/.test(r) && /bwrap --version/.test(r))).toBe(true);
    const buildRuns = stages.slice(0, -1).flatMap((st) => st.body.filter((i) => i.getKeyword() === 'RUN'));
    expect(buildRuns.map((i) => i.getRawArgumentsContent() ?? '').join('\n')).not.toContain('bubblewrap');
  });

  it('has a HEALTHCHECK on /healthz that uses node (no curl or wget in slim images)', () => {
    const hcs = inFinal('HEALTHCHECK');
    expect(hcs).toHaveLength(1);
    const raw = hcs[0]!.getRawArgumentsContent() ?? '';
    const cmd = /\bCMD\s+(\[[\s\S]*\])\s*$/.exec(raw.replace(/\\\n/g, ' '));
    expect(cmd, raw).not.toBeNull();
    const argv = JSON.parse(cmd![1] as string) as string[];
    expect(argv[0]).toBe('node');
    expect(argv.join(' ')).toMatch(/\/healthz/);
    expect(argv.join(' ')).toMatch(/MCPGW_PORT/);
    expect(raw).not.toMatch(/\b(curl|wget)\b/);
    const flags = Object.fromEntries((hcs[0] as any).getFlags().map((f: any) => [f.getName(), f.getValue()]));
    expect(flags['start-period']).toMatch(/^\d+s$/);
    expect(flags.timeout).toMatch(/^\d+s$/);
  });

  it('the CMD runs dist/main.js with a config file that is in the repository and that the gateway accepts', () => {
    const cmds = inFinal('CMD');
    expect(cmds).toHaveLength(1);
    const argv = json(cmds[0]!);
    expect(argv.slice(0, 3)).toEqual(['node', 'dist/main.js', '--config']);
    const repoFile = repoPathOfImagePath(argv[3] as string);
    expect(repoFile, `${argv[3]} comes from examples/`).toBeDefined();
    expect(existsSync(repoFile!), `${repoFile} exists`).toBe(true);
    const config = checkGatewayConfig(parseYaml(readFileSync(repoFile!, 'utf8')), imageEnv());
    expect(config.listen).toMatchObject({ host: '0.0.0.0', port: 8080 });
    expect(config.sessions.store).toBe('memory'); // a lone container needs no Redis
    expect(missingExampleScripts(config)).toEqual([]);
    // Exec-form ENTRYPOINT (tini), so signals reach the gateway.
    for (const ep of inFinal('ENTRYPOINT')) expect(json(ep).length, 'ENTRYPOINT in exec form').toBeGreaterThan(0);
  });
});
