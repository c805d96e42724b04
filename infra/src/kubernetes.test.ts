import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEPLOYABLES, REDIS_TOPOLOGIES, ROOT, databaseVariables, directDatabaseVariable } from './deployables';
import { imageEnvironment } from './dockerfile';
import { editKustomization, findKubectl, kubectlKustomize, scratchCopy, withoutNameHashes } from './kubectl';
import { AUTOSCALED, POOLER, kubernetesProblems, parseIni, replicaBounds, schemaProblems } from './kubernetes';
import { type K8sObject, containersOf, imageName, parseEnvFile, podOf, readDocuments, readKustomization, renderKustomization } from './kustomize';

const K8S = join(ROOT, 'infra/k8s');
const BASE = join(K8S, 'base');
const PRODUCTION = join(K8S, 'overlays/production');
const CPU_AUTOSCALING = join(K8S, 'overlays/cpu-autoscaling');
const OVERLAYS = readdirSync(join(K8S, 'overlays')).map((name) => join(K8S, 'overlays', name));
const REDIS_COMPONENTS = Object.keys(REDIS_TOPOLOGIES).map((topology) => `redis-${topology}`);
const SECRET = 'platform-secrets';
const SECRETS_EXAMPLE = join(PRODUCTION, 'secrets.env.example');
const exampleSecrets = () => parseEnvFile(readFileSync(SECRETS_EXAMPLE, 'utf8'));
/** The overlays read git-ignored files (secrets.env, pgbouncer-userlist.txt); the tests render them with the committed examples. */
const render = (dir: string) => renderKustomization(dir, { fileFallback: (file) => (existsSync(`${file}.example`) ? `${file}.example` : undefined) });

/** Renders a scratch copy of infra/k8s after `edit`, at `overlay` (relative to infra/k8s). */
function renderCopy(overlay: string, edit: (root: string) => void): K8sObject[] {
  const copy = scratchCopy(K8S, edit);
  try {
    return render(join(copy.root, overlay));
  } finally {
    copy.remove();
  }
}
/** The base with one Redis topology: what an overlay starts from. */
const renderBase = (component = 'redis-standalone') =>
  renderCopy('base', (root) =>
    editKustomization(join(root, 'base'), (k) => {
      k.components = [`../components/${component}`];
    }),
  );
/** A scratch edit: the production overlay with this Redis topology instead of its own. */
const productionRedis = (component: string) => (root: string) =>
  editKustomization(join(root, 'overlays/production'), (k) => {
    k.components = (k.components ?? []).filter((c) => !c.includes('/redis-')).concat(`../../components/${component}`);
  });

const allFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
const kustomizationDirs = () =>
  allFiles(K8S)
    .filter((f) => f.endsWith('/kustomization.yaml'))
    .map((f) => resolve(f, '..'));

const find = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const names = (objects: K8sObject[], kind: string) =>
  objects
    .filter((o) => o.kind === kind)
    .map((o) => o.metadata.name)
    .sort();
const containerOf = (objects: K8sObject[], name: string) => {
  const container = containersOf(find(objects, 'Deployment', name)).find((c) => c.name === name);
  if (!container) throw new Error(`no container ${name}`);
  return container;
};
const envNames = (objects: K8sObject[], name: string) => (containerOf(objects, name).env ?? []).map((e) => e.name);
const secretKey = (objects: K8sObject[], deployment: string, variable: string) =>
  containerOf(objects, deployment).env?.find((e) => e.name === variable)?.valueFrom?.secretKeyRef?.key;

describe('kustomize files', () => {
  it('every resource, component, patch and generator input a kustomization names exists, and every manifest file is named by one', () => {
    const named = new Set<string>();
    for (const dir of kustomizationDirs()) {
      const k = readKustomization(dir);
      const generated = [...(k.secretGenerator ?? []), ...(k.configMapGenerator ?? [])].flatMap((g) => [
        ...(g.envs ?? []),
        ...(g.files ?? []).map((f) => f.slice(f.indexOf('=') + 1)),
      ]);
      for (const entry of [...(k.resources ?? []), ...(k.components ?? []), ...(k.patches ?? []).map((p) => p.path ?? '')]) {
        const path = resolve(dir, entry);
        expect([relative(ROOT, path), existsSync(path)]).toEqual([relative(ROOT, path), true]);
        named.add(path);
      }
      // Git-ignored inputs exist as their committed .example.
      for (const entry of generated) {
        const path = resolve(dir, entry);
        expect([relative(ROOT, path), existsSync(path) || existsSync(`${path}.example`)]).toEqual([relative(ROOT, path), true]);
      }
    }
    const manifests = allFiles(K8S).filter((f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'));
    for (const file of manifests) expect([relative(ROOT, file), named.has(file)]).toEqual([relative(ROOT, file), true]);
  });

  it('every resource file validates against the Kubernetes schema (KEDA CRD included) as it is written', () => {
    const resources = kustomizationDirs().flatMap((dir) =>
      (readKustomization(dir).resources ?? []).map((r) => resolve(dir, r)).filter((path) => statSync(path).isFile()),
    );
    expect(resources.length).toBeGreaterThan(8);
    for (const file of resources) expect([relative(ROOT, file), schemaProblems(readDocuments(file))]).toEqual([relative(ROOT, file), []]);
  });

  it('the YAML has no duplicate keys (a later one would silently win)', () => {
    for (const file of allFiles(K8S).filter((f) => f.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'), { uniqueKeys: true }))
        expect([relative(ROOT, file), doc.errors]).toEqual([relative(ROOT, file), []]);
    }
  });

  it('every overlay renders (the test renderer; kubectl below where it is installed)', () => {
    expect(OVERLAYS.map((o) => relative(K8S, o)).sort()).toEqual(['overlays/cpu-autoscaling', 'overlays/production']);
    for (const overlay of OVERLAYS) expect([relative(ROOT, overlay), render(overlay).length > 10]).toEqual([relative(ROOT, overlay), true]);
  });
});

describe('infra/k8s/base', () => {
  const objects = renderBase();

  it('holds every rule with a Redis topology: schema, probes, resources, non-root, env against each config schema, PDBs, autoscalers, migration Jobs', () => {
    expect(kubernetesProblems(objects, { [SECRET]: exampleSecrets() })).toEqual([]);
  });

  it('sets no Redis variable itself: the topology is a component the overlay chooses', () => {
    for (const o of render(BASE).flatMap(containersOf)) expect([o.name, (o.env ?? []).filter((e) => e.name.startsWith('REDIS_'))]).toEqual([o.name, []]);
  });

  it('has a Deployment and a PDB per deployable, a Service per API, the gateway on an HPA, the run worker on KEDA, a migration Job per database', () => {
    expect(names(objects, 'Deployment')).toEqual(DEPLOYABLES.map((d) => d.name).sort());
    expect(names(objects, 'PodDisruptionBudget')).toEqual(DEPLOYABLES.map((d) => d.name).sort());
    expect(names(objects, 'Service')).toEqual(['events', 'gateway', 'pipelines', 'warehouse']);
    expect(names(objects, 'HorizontalPodAutoscaler')).toEqual(['gateway']);
    expect(names(objects, 'ScaledObject')).toEqual(['pipelines-worker']);
    expect([...names(objects, 'HorizontalPodAutoscaler'), ...names(objects, 'ScaledObject')].sort()).toEqual([...AUTOSCALED].sort());
    expect(names(objects, 'Job')).toEqual(['events-migrate', 'gateway-migrate', 'pipelines-migrate', 'warehouse-migrate']);
    expect(names(objects, 'ConfigMap')).toEqual(DEPLOYABLES.map((d) => `${d.name}-config`).sort());
  });

  it('commits no Secret: it only refers to platform-secrets, by keys of secrets.env.example', () => {
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const refs = objects.flatMap(containersOf).flatMap((c) => (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : [])));
    expect(new Set(refs.map((r) => r.name))).toEqual(new Set([SECRET]));
    for (const key of new Set(refs.map((r) => r.key))) expect([key, key in exampleSecrets()]).toEqual([key, true]);
  });

  it('runs the worker from the pipelines image with its own command and health port', () => {
    const [worker] = containersOf(find(objects, 'Deployment', 'pipelines-worker'));
    expect(worker?.image).toBe('platform/pipelines');
    expect(worker?.command).toEqual(['node', '--enable-source-maps', 'dist/worker.js']);
    expect(worker?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(worker?.ports).toEqual([
      { name: 'http', containerPort: 4013 },
      { name: 'metrics', containerPort: 9113 },
    ]);
  });

  it('scales the run workers on their queue through KEDA: max of queue_depth of their queue, one worker per WORKER_CONCURRENCY jobs, never below one', () => {
    const spec = find(objects, 'ScaledObject', 'pipelines-worker').spec as {
      minReplicaCount: number;
      triggers: Array<{ type: string; metadata: Record<string, string> }>;
    };
    expect(spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(spec.triggers).toEqual([
      {
        type: 'prometheus',
        metadata: {
          serverAddress: expect.stringMatching(/^http/) as string,
          query: 'max(queue_depth{queue="pipeline-runs", state=~"waiting|active"})',
          threshold: (find(objects, 'ConfigMap', 'pipelines-worker-config').data as Record<string, string>).WORKER_CONCURRENCY,
        },
      },
    ]);
  });

  it('every Deployment listens on every interface of its pod (HOST=0.0.0.0 from its image; probes come from the kubelet)', () => {
    for (const d of DEPLOYABLES) {
      const [container] = containersOf(find(objects, 'Deployment', d.name));
      const own = container?.env?.find((e) => e.name === 'HOST')?.value ?? (find(objects, 'ConfigMap', `${d.name}-config`).data as Record<string, string>).HOST;
      expect([d.name, own ?? imageEnvironment(d.dir).HOST]).toEqual([d.name, '0.0.0.0']);
    }
  });

  it('has Prometheus scrape every Deployment on its metrics port, never on its API port', () => {
    for (const d of DEPLOYABLES) {
      const pod = podOf(find(objects, 'Deployment', d.name));
      const metrics = containersOf(find(objects, 'Deployment', d.name))[0]?.ports?.find((p) => p.name === 'metrics');
      expect([d.name, pod?.annotations['prometheus.io/scrape'], pod?.annotations['prometheus.io/port']]).toEqual([
        d.name,
        'true',
        String(metrics?.containerPort),
      ]);
      expect(metrics?.containerPort).not.toBe(containersOf(find(objects, 'Deployment', d.name))[0]?.ports?.find((p) => p.name === 'http')?.containerPort);
    }
  });
});

describe('infra/k8s/overlays/production', () => {
  const objects = render(PRODUCTION);
  const overlay = readKustomization(PRODUCTION);

  it('holds every rule after its components and patches (rendered with the .example files)', () => {
    expect(kubernetesProblems(objects)).toEqual([]);
  });

  it('puts everything in its namespace and runs tagged images of its registry only', () => {
    for (const o of objects.filter((x) => x.kind !== 'Namespace'))
      expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([o.kind, o.metadata.name, overlay.namespace]);
    const images = objects.flatMap(containersOf).map((c) => c.image);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      const entry = overlay.images?.find((i) => i.newName === imageName(image));
      expect([image, entry !== undefined, image.endsWith(`:${entry?.newTag}`), image.endsWith(':latest')]).toEqual([image, true, true, false]);
    }
  });

  it('sets replicas on the fixed-size Deployments and lets the autoscalers size the others, two at least', () => {
    for (const { name, count } of overlay.replicas ?? []) expect((find(objects, 'Deployment', name).spec as { replicas?: number }).replicas).toBe(count);
    for (const name of AUTOSCALED) {
      const deployment = find(objects, 'Deployment', name);
      expect((deployment.spec as { replicas?: number }).replicas).toBeUndefined();
      expect([name, replicaBounds(objects, deployment).min >= 2]).toEqual([name, true]);
    }
  });

  it('scales the run workers with KEDA by default, on the threshold of its WORKER_CONCURRENCY', () => {
    expect(names(objects, 'ScaledObject')).toEqual(['pipelines-worker']);
    expect(names(objects, 'HorizontalPodAutoscaler')).toEqual(['gateway']);
    const trigger = (find(objects, 'ScaledObject', 'pipelines-worker').spec as { triggers: Array<{ metadata: Record<string, string> }> }).triggers[0];
    expect(trigger?.metadata.threshold).toBe('8');
    expect((find(objects, 'ConfigMap', 'pipelines-worker-config').data as Record<string, string>).WORKER_CONCURRENCY).toBe('8');
  });

  it('gives every Deployment, PgBouncer included, one PodDisruptionBudget that selects its pods and lets a drain evict one pod', () => {
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...DEPLOYABLES.map((d) => d.name), POOLER].sort());
    for (const deployment of deployments) {
      const labels = podOf(deployment)?.labels ?? {};
      const budgets = objects.filter(
        (o) =>
          o.kind === 'PodDisruptionBudget' &&
          Object.entries((o.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels).every(([k, v]) => labels[k] === v),
      );
      expect([deployment.metadata.name, budgets.map((b) => (b.spec as { maxUnavailable?: number }).maxUnavailable)]).toEqual([deployment.metadata.name, [1]]);
    }
  });

  it('sends every *_DATABASE_URL through PgBouncer, every *_DIRECT_DATABASE_URL and every migration straight to PostgreSQL', () => {
    const secrets = exampleSecrets();
    const host = (key: string | undefined) => new URL(secrets[key ?? ''] ?? 'x:').host;
    for (const d of DEPLOYABLES) {
      for (const variable of databaseVariables(d.schema)) {
        expect([d.name, variable, host(secretKey(objects, d.name, variable))]).toEqual([d.name, variable, `${POOLER}:6432`]);
        const direct = directDatabaseVariable(variable);
        expect([d.name, direct, host(secretKey(objects, d.name, direct))]).toEqual([d.name, direct, 'postgres.example.internal:5432']);
      }
    }
    for (const job of objects.filter((o) => o.kind === 'Job')) {
      const env = containersOf(job)[0]?.env ?? [];
      const direct = env.find((e) => e.name.endsWith('_DIRECT_DATABASE_URL'))?.valueFrom?.secretKeyRef?.key;
      expect([job.metadata.name, host(direct)]).toEqual([job.metadata.name, 'postgres.example.internal:5432']);
    }
    const ini = parseIni((find(objects, 'ConfigMap', 'pgbouncer-config').data as Record<string, string>)['pgbouncer.ini'] ?? '');
    expect(ini.pgbouncer?.pool_mode).toBe('transaction');
    expect(ini.databases?.['*']).toBe('host=postgres.example.internal port=5432');
  });

  it('includes exactly one Redis topology and names the other two', () => {
    expect((overlay.components ?? []).filter((c) => REDIS_COMPONENTS.some((r) => c.endsWith(`/${r}`)))).toHaveLength(1);
    const text = readFileSync(join(PRODUCTION, 'kustomization.yaml'), 'utf8');
    for (const component of REDIS_COMPONENTS) expect(text).toContain(`../../components/${component}`);
  });

  it('uses every key of secrets.env.example', () => {
    const used = new Set(
      objects.flatMap(containersOf).flatMap((c) => (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : []))),
    );
    for (const key of Object.keys(exampleSecrets())) expect([key, used.has(key)]).toEqual([key, true]);
  });

  it('applies its resource patches over the base', () => {
    const gateway = (objs: K8sObject[]) => containersOf(find(objs, 'Deployment', 'gateway'))[0]?.resources?.requests?.memory;
    expect(gateway(objects)).toBe('256Mi');
    expect(gateway(renderBase())).not.toBe(gateway(objects));
  });

  it('generates its Secrets from secrets.env and pgbouncer-userlist.txt, which git ignores and no image receives', () => {
    expect(overlay.secretGenerator?.find((g) => g.name === SECRET)?.envs).toEqual(['secrets.env']);
    expect(overlay.secretGenerator?.find((g) => g.name === 'pgbouncer-userlist')?.files).toEqual(['userlist.txt=pgbouncer-userlist.txt']);
    for (const generator of overlay.secretGenerator ?? []) expect(generator.options?.labels?.['app.kubernetes.io/component']).toBe('config');
    for (const file of ['secrets.env', 'pgbouncer-userlist.txt']) {
      const path = relative(ROOT, join(PRODUCTION, file));
      const ignored = spawnSync('git', ['check-ignore', '-q', '--no-index', path], { cwd: ROOT });
      expect([path, ignored.status]).toEqual([path, 0]);
      // .dockerignore keeps infra/k8s out of every build context.
      expect(readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')).toContain('infra/k8s');
    }
    const tracked = spawnSync('git', ['ls-files', 'infra/k8s'], { cwd: ROOT, encoding: 'utf8' });
    expect(tracked.stdout.split('\n').filter((f) => f.endsWith('/secrets.env') || f.endsWith('/pgbouncer-userlist.txt'))).toEqual([]);
  });
});

describe('Redis topologies', () => {
  it.each(REDIS_COMPONENTS)('production with %s: every deployable gets that topology variables and no other', (component) => {
    const objects = renderCopy('overlays/production', productionRedis(component));
    expect(kubernetesProblems(objects)).toEqual([]);
    const topology = component.replace('redis-', '');
    for (const d of DEPLOYABLES) {
      const redis = envNames(objects, d.name)
        .filter((n) => n.startsWith('REDIS_'))
        .sort();
      expect([d.name, redis]).toEqual([d.name, [...(REDIS_TOPOLOGIES[topology] ?? []), 'REDIS_PASSWORD', 'REDIS_USERNAME'].sort()]);
    }
    expect(envNames(objects, POOLER).filter((n) => n.startsWith('REDIS_'))).toEqual([]);
  });
});

describe('infra/k8s/overlays/cpu-autoscaling', () => {
  const objects = render(CPU_AUTOSCALING);

  it('holds every rule', () => {
    expect(kubernetesProblems(objects)).toEqual([]);
  });

  it('is production with the run workers on a CPU HPA instead of KEDA, with the same bounds', () => {
    const production = render(PRODUCTION);
    expect(names(objects, 'ScaledObject')).toEqual([]);
    expect(names(objects, 'HorizontalPodAutoscaler')).toEqual(['gateway', 'pipelines-worker']);
    const worker = (objs: K8sObject[]) => replicaBounds(objs, find(objs, 'Deployment', 'pipelines-worker'));
    expect(worker(objects)).toEqual(worker(production));
    const rest = (objs: K8sObject[]) =>
      objs.filter((o) => !(['ScaledObject', 'HorizontalPodAutoscaler'].includes(o.kind) && o.metadata.name === 'pipelines-worker'));
    expect(rest(objects)).toEqual(rest(production));
  });
});

const kubectl = findKubectl();
(kubectl ? describe : describe.skip)(`kubectl kustomize (${kubectl ?? 'no kubectl with kustomize 5 installed'})`, () => {
  const variants: Array<[string, string, (root: string) => void]> = [
    ...OVERLAYS.map((o): [string, string, (root: string) => void] => [relative(K8S, o), relative(K8S, o), () => undefined]),
    ...REDIS_COMPONENTS.map((c): [string, string, (root: string) => void] => [`overlays/production with ${c}`, 'overlays/production', productionRedis(c)]),
  ];
  it.each(variants)('renders %s, to the same objects as the test renderer', (_, overlay, edit) => {
    const copy = scratchCopy(K8S, edit);
    try {
      const ours = render(join(copy.root, overlay));
      const theirs = withoutNameHashes(kubectlKustomize(kubectl ?? 'kubectl', join(copy.root, overlay)), new Set(ours.map((o) => o.metadata.name)));
      const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
      const sorted = (objs: K8sObject[]) => [...objs].sort((a, b) => key(a).localeCompare(key(b)));
      expect(sorted(theirs)).toEqual(sorted(ours));
    } finally {
      copy.remove();
    }
  });
});

describe('the Kubernetes rules catch', () => {
  const base = renderBase();
  const deployment = (objects: K8sObject[], name: string) => find(objects, 'Deployment', name);
  const container = (objects: K8sObject[], name: string) => {
    const c = podOf(deployment(objects, name))?.spec.containers[0];
    if (!c) throw new Error(`no container in ${name}`);
    return c;
  };
  const cases: Array<[string, (o: K8sObject[]) => void, string]> = [
    [
      'a readiness probe on /healthz',
      (o) => Object.assign(container(o, 'events').readinessProbe?.httpGet ?? {}, { path: '/healthz' }),
      'Deployment events: readinessProbe GETs /healthz',
    ],
    [
      'a liveness probe on the wrong port',
      (o) => Object.assign(container(o, 'pipelines-worker').livenessProbe?.httpGet ?? {}, { port: 4003 }),
      'Deployment pipelines-worker: livenessProbe GETs /healthz on port 4003',
    ],
    ['no liveness probe', (o) => delete container(o, 'gateway').livenessProbe, 'Deployment gateway: no livenessProbe'],
    [
      'a container port that is not the configured one',
      (o) => Object.assign(container(o, 'warehouse').ports?.[0] ?? {}, { containerPort: 4999 }),
      'Deployment warehouse: no containerPort 4002',
    ],
    ['root allowed', (o) => Object.assign(podOf(deployment(o, 'gateway'))?.spec.securityContext ?? {}, { runAsNonRoot: false }), 'runAsNonRoot is not true'],
    ['no memory limit', (o) => delete container(o, 'events').resources?.limits?.memory, 'Deployment events: no memory limit'],
    ['a request above its limit', (o) => Object.assign(container(o, 'events').resources?.requests ?? {}, { cpu: '4' }), 'cpu request 4 above its limit'],
    [
      'a variable the schema does not know',
      (o) => container(o, 'events').env?.push({ name: 'EVENTS_PORTT', value: '4001' }),
      'EVENTS_PORTT is not a variable of its config schema',
    ],
    [
      'a ConfigMap key the schema does not know',
      (o) => Object.assign(find(o, 'ConfigMap', 'gateway-config').data as object, { UPSTREAM_TIMEOUT_MS: '5000' }),
      'Deployment gateway: UPSTREAM_TIMEOUT_MS is not a variable',
    ],
    [
      'a required secret missing',
      (o) => container(o, 'gateway').env?.splice(container(o, 'gateway').env?.findIndex((e) => e.name === 'PLATFORM_ADMIN_TOKEN') ?? 0, 1),
      'required variable PLATFORM_ADMIN_TOKEN is not set',
    ],
    [
      'a secret key that does not exist',
      (o) => Object.assign(container(o, 'events').env?.[0]?.valueFrom?.secretKeyRef ?? {}, { key: 'EVENTS_DB_URL' }),
      'refers to key EVENTS_DB_URL of Secret platform-secrets',
    ],
    [
      'an upstream on the wrong port',
      (o) => Object.assign(find(o, 'ConfigMap', 'gateway-config').data as object, { EVENTS_URL: 'http://events:4999' }),
      'EVENTS_URL (http://events:4999) does not reach',
    ],
    ['a worker running the API', (o) => delete container(o, 'pipelines-worker').command, 'no command, so it would run the image CMD'],
    [
      'a grace period shorter than the worker shutdown',
      (o) => Object.assign(podOf(deployment(o, 'pipelines-worker'))?.spec ?? {}, { terminationGracePeriodSeconds: 30 }),
      'terminationGracePeriodSeconds 30 does not exceed',
    ],
    [
      'an HPA on a missing Deployment',
      (o) => Object.assign((find(o, 'HorizontalPodAutoscaler', 'gateway').spec as { scaleTargetRef: object }).scaleTargetRef, { name: 'gateway-api' }),
      'targets Deployment gateway-api',
    ],
    ['replicas fighting the HPA', (o) => Object.assign(deployment(o, 'gateway').spec as object, { replicas: 2 }), 'its Deployment gateway sets replicas'],
    [
      'a migration Job running something else',
      (o) => Object.assign(podOf(find(o, 'Job', 'events-migrate'))?.spec.containers[0] ?? {}, { command: ['node', 'dist/main.js'] }),
      'Job events-migrate: runs ["node","dist/main.js"]',
    ],
    ['a missing migration Job', (o) => o.splice(o.indexOf(find(o, 'Job', 'warehouse-migrate')), 1), 'Job warehouse-migrate: missing'],
    [
      'a Service that also selects migration pods',
      (o) => delete (find(o, 'Service', 'events').spec as { selector: Record<string, string> }).selector['app.kubernetes.io/component'],
      'Service events: also selects the pods of Job events-migrate',
    ],
    ['a schema violation', (o) => Object.assign(container(o, 'events').ports?.[0] ?? {}, { containerPort: '4001' }), 'must be integer'],
    ['an unknown kind', (o) => o.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray' } }), 'Pod stray: v1 Pod is not a kind these manifests use'],
    [
      'no metrics port on the container',
      (o) => container(o, 'events').ports?.splice(1, 1),
      'Deployment events: no containerPort 9101 named metrics (METRICS_PORT)',
    ],
    [
      'a METRICS_PORT the container does not open',
      (o) => Object.assign(find(o, 'ConfigMap', 'gateway-config').data as object, { METRICS_PORT: '9999' }),
      'Deployment gateway: no containerPort 9999 named metrics',
    ],
    [
      'metrics on the API port',
      (o) => Object.assign(find(o, 'ConfigMap', 'warehouse-config').data as object, { METRICS_PORT: '4002' }),
      'Deployment warehouse: serves /metrics on its API port 4002',
    ],
    [
      'no scrape annotation',
      (o) => delete podOf(deployment(o, 'pipelines-worker'))!.annotations['prometheus.io/scrape'],
      'Deployment pipelines-worker: pod annotation prometheus.io/scrape is not "true"',
    ],
    [
      'a scrape annotation on another port',
      (o) => Object.assign(podOf(deployment(o, 'pipelines'))!.annotations, { 'prometheus.io/port': '4003' }),
      'Deployment pipelines: pod annotation prometheus.io/port is 4003, expected 9103',
    ],
    [
      'a deployable on loopback in its pod',
      (o) => Object.assign(find(o, 'ConfigMap', 'pipelines-worker-config').data as object, { HOST: '127.0.0.1' }),
      'Deployment pipelines-worker: listens on HOST 127.0.0.1 (set) inside its container',
    ],
    [
      'a config without its phase label',
      (o) => delete find(o, 'ConfigMap', 'events-config').metadata.labels?.['app.kubernetes.io/component'],
      'ConfigMap events-config: label app.kubernetes.io/component is not config',
    ],
  ];
  it.each(cases)('%s', (_, mutate, problem) => {
    const mutated = structuredClone(base);
    mutate(mutated);
    expect(kubernetesProblems(mutated, { [SECRET]: exampleSecrets() }).join('\n')).toContain(problem);
  });

  type Trigger = { type: string; metadata: Record<string, string> };
  const trigger = (o: K8sObject[]) => (find(o, 'ScaledObject', 'pipelines-worker').spec as { triggers: Trigger[] }).triggers[0] as Trigger;
  const budget = (o: K8sObject[], name: string) => find(o, 'PodDisruptionBudget', name).spec as Record<string, unknown>;
  const scaling: Array<[string, (o: K8sObject[]) => void, string]> = [
    [
      'workers scaled to zero',
      (o) => Object.assign(find(o, 'ScaledObject', 'pipelines-worker').spec as object, { minReplicaCount: 0 }),
      'ScaledObject pipelines-worker: minReplicaCount 0: every run worker ticks the pipeline schedules',
    ],
    [
      'a sum over the workers, which count the same queue each',
      (o) => Object.assign(trigger(o).metadata, { query: 'sum(queue_depth{queue="pipeline-runs", state=~"waiting|active"})' }),
      'is not max(queue_depth{...})',
    ],
    [
      'another queue',
      (o) => Object.assign(trigger(o).metadata, { query: 'max(queue_depth{queue="webhooks", state=~"waiting|active"})' }),
      'query does not select queue="pipeline-runs" (PIPELINES_RUNS_QUEUE of pipelines-worker)',
    ],
    [
      'delayed jobs counted as backlog',
      (o) => Object.assign(trigger(o).metadata, { query: 'max(queue_depth{queue="pipeline-runs", state=~"waiting|active|delayed"})' }),
      'query must count state=~"waiting|active"',
    ],
    [
      'a label the metric does not have',
      (o) => Object.assign(trigger(o).metadata, { query: 'max(queue_depth{queue="pipeline-runs", state=~"waiting|active", prefix="platform"})' }),
      'query selects label prefix, which queue_depth does not have (queue, state)',
    ],
    [
      'a threshold that does not follow WORKER_CONCURRENCY',
      (o) => Object.assign(find(o, 'ConfigMap', 'pipelines-worker-config').data as object, { WORKER_CONCURRENCY: '16' }),
      'threshold 4 is not WORKER_CONCURRENCY of pipelines-worker (16)',
    ],
    [
      'a CPU HPA beside the ScaledObject',
      (o) => {
        const hpa = structuredClone(find(o, 'HorizontalPodAutoscaler', 'gateway'));
        hpa.metadata.name = 'pipelines-worker';
        (hpa.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name = 'pipelines-worker';
        o.push(hpa);
      },
      'Deployment pipelines-worker: ScaledObject pipelines-worker and HorizontalPodAutoscaler pipelines-worker would fight over its replicas',
    ],
    [
      'a ScaledObject against the KEDA schema',
      (o) => Object.assign(find(o, 'ScaledObject', 'pipelines-worker').spec as object, { maxReplicaCount: '10' }),
      'ScaledObject pipelines-worker: data/spec/maxReplicaCount must be integer',
    ],
    ['no autoscaler for the worker', (o) => o.splice(o.indexOf(find(o, 'ScaledObject', 'pipelines-worker')), 1), 'autoscaler for pipelines-worker: missing'],
    [
      'a Deployment without a PodDisruptionBudget',
      (o) => o.splice(o.indexOf(find(o, 'PodDisruptionBudget', 'warehouse')), 1),
      'Deployment warehouse: 0 PodDisruptionBudgets select its pods, expected one',
    ],
    [
      'a minAvailable that blocks draining a single replica',
      (o) => Object.assign(budget(o, 'events'), { maxUnavailable: undefined, minAvailable: 1 }),
      'PodDisruptionBudget events: minAvailable blocks a drain',
    ],
    [
      'a budget that lets a drain take every pod',
      (o) => Object.assign(budget(o, 'events'), { maxUnavailable: 2 }),
      'PodDisruptionBudget events: maxUnavailable 2 lets a drain take all 2 pods of events',
    ],
    [
      'a budget that blocks every eviction',
      (o) => Object.assign(budget(o, 'gateway'), { maxUnavailable: 0 }),
      'PodDisruptionBudget gateway: maxUnavailable 0, expected a number of pods, at least 1',
    ],
    [
      'two Redis topologies on one process',
      (o) => containerOf(o, 'events').env?.push({ name: 'REDIS_CLUSTER_NODES', value: 'redis-0:6379' }),
      'Deployment events: sets the Redis variables of standalone and cluster, expected exactly one',
    ],
    [
      'no Redis topology',
      (o) => Object.assign(containerOf(o, 'gateway'), { env: containerOf(o, 'gateway').env?.filter((e) => !e.name.startsWith('REDIS_')) }),
      'Deployment gateway: sets the Redis variables of no topology',
    ],
    [
      'a Sentinel without its master name',
      (o) => {
        const env = containerOf(o, 'pipelines').env ?? [];
        env.splice(
          env.findIndex((e) => e.name === 'REDIS_URL'),
          1,
          { name: 'REDIS_SENTINELS', value: 'sentinel-0:26379' },
        );
      },
      'Deployment pipelines: Redis sentinel without REDIS_SENTINEL_MASTER',
    ],
  ];
  it.each(scaling)('%s', (_, mutate, problem) => {
    const mutated = structuredClone(base);
    mutate(mutated);
    expect(kubernetesProblems(mutated, { [SECRET]: exampleSecrets() }).join('\n')).toContain(problem);
  });

  const production = render(PRODUCTION);
  const ini = (o: K8sObject[]) => find(o, 'ConfigMap', 'pgbouncer-config').data as Record<string, string>;
  const secrets = (o: K8sObject[]) => find(o, 'Secret', SECRET).data as Record<string, string>;
  const base64 = (text: string) => Buffer.from(text).toString('base64');
  const pooling: Array<[string, (o: K8sObject[]) => void, string]> = [
    [
      'PgBouncer in session mode',
      (o) => Object.assign(ini(o), { 'pgbouncer.ini': ini(o)['pgbouncer.ini']?.replace('pool_mode = transaction', 'pool_mode = session') }),
      'Deployment pgbouncer: pool_mode session, expected transaction',
    ],
    [
      'too few client connections for the fleet at its largest',
      (o) => Object.assign(ini(o), { 'pgbouncer.ini': ini(o)['pgbouncer.ini']?.replace('max_client_conn = 1000', 'max_client_conn = 300') }),
      'Deployment pgbouncer: max_client_conn 300 is below the 490 connections',
    ],
    [
      'a direct URL missing where the pooled one goes through PgBouncer',
      (o) => {
        const env = containerOf(o, 'gateway').env ?? [];
        env.splice(
          env.findIndex((e) => e.name === 'GATEWAY_DIRECT_DATABASE_URL'),
          1,
        );
      },
      'Deployment gateway: GATEWAY_DATABASE_URL goes through PgBouncer in transaction mode but GATEWAY_DIRECT_DATABASE_URL is not set',
    ],
    [
      'a direct URL through PgBouncer',
      (o) => Object.assign(secrets(o), { EVENTS_DIRECT_DATABASE_URL: base64('postgresql://events:replace-me@pgbouncer:6432/platform_events') }),
      'Deployment events: EVENTS_DIRECT_DATABASE_URL goes through PgBouncer',
    ],
    [
      'a direct URL to another PostgreSQL than PgBouncer forwards to',
      (o) =>
        Object.assign(secrets(o), {
          WAREHOUSE_DIRECT_DATABASE_URL: base64('postgresql://warehouse:replace-me@other.example.internal:5432/platform_warehouse'),
        }),
      'Deployment warehouse: WAREHOUSE_DIRECT_DATABASE_URL reaches other.example.internal:5432, but PgBouncer forwards platform_warehouse to postgres.example.internal:5432',
    ],
    [
      'a user PgBouncer does not know',
      (o) => Object.assign(find(o, 'Secret', 'pgbouncer-userlist').data as object, { 'userlist.txt': base64('"gateway" "replace-me"\n') }),
      "Deployment events: EVENTS_DATABASE_URL's user events is not in PgBouncer's auth_file",
    ],
    [
      'a pooled URL on the wrong port',
      (o) => Object.assign(secrets(o), { PIPELINES_DATABASE_URL: base64('postgresql://pipelines:replace-me@pgbouncer:5432/platform_pipelines') }),
      'Deployment pipelines: PIPELINES_DATABASE_URL points at pgbouncer:5432, a port its Service does not have',
    ],
    [
      'migrations through PgBouncer',
      (o) => {
        const env = podOf(find(o, 'Job', 'gateway-migrate'))?.spec.containers[0]?.env ?? [];
        env.splice(
          env.findIndex((e) => e.name === 'GATEWAY_DIRECT_DATABASE_URL'),
          1,
        );
      },
      'Job gateway-migrate: migrates through PgBouncer (GATEWAY_DATABASE_URL)',
    ],
    [
      'PgBouncer without a PodDisruptionBudget',
      (o) => o.splice(o.indexOf(find(o, 'PodDisruptionBudget', POOLER)), 1),
      'Deployment pgbouncer: 0 PodDisruptionBudgets select its pods',
    ],
    [
      'PgBouncer as root',
      (o) => Object.assign(podOf(find(o, 'Deployment', POOLER))?.spec.securityContext ?? {}, { runAsNonRoot: false }),
      'Deployment pgbouncer: pod securityContext.runAsNonRoot is not true',
    ],
  ];
  it.each(pooling)('production: %s', (_, mutate, problem) => {
    const mutated = structuredClone(production);
    mutate(mutated);
    expect(kubernetesProblems(mutated).join('\n')).toContain(problem);
  });
});
