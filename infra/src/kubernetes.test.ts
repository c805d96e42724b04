import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEPLOYABLES, ROOT } from './deployables';
import { imageEnvironment } from './dockerfile';
import { AUTOSCALED, kubernetesProblems, schemaProblems } from './kubernetes';
import { type K8sObject, containersOf, imageName, parseEnvFile, podOf, readDocuments, readKustomization, renderKustomization } from './kustomize';

const K8S = join(ROOT, 'infra/k8s');
const BASE = join(K8S, 'base');
const PRODUCTION = join(K8S, 'overlays/production');
const SECRET = 'platform-secrets';
const SECRETS_EXAMPLE = join(PRODUCTION, 'secrets.env.example');
const exampleSecrets = () => parseEnvFile(readFileSync(SECRETS_EXAMPLE, 'utf8'));
/** The overlay reads the git-ignored secrets.env; the tests render it with the committed example. */
const renderProduction = () => renderKustomization(PRODUCTION, { envFileFallback: (file) => (file.endsWith('secrets.env') ? SECRETS_EXAMPLE : undefined) });

const allFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });

const find = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

describe('kustomize files', () => {
  it('every resource and patch a kustomization names exists, and every manifest file is named by one', () => {
    const named = new Set<string>();
    for (const dir of [BASE, PRODUCTION]) {
      const k = readKustomization(dir);
      for (const entry of [...(k.resources ?? []), ...(k.patches ?? []).map((p) => p.path ?? '')]) {
        const path = resolve(dir, entry);
        expect([relative(ROOT, path), existsSync(path)]).toEqual([relative(ROOT, path), true]);
        named.add(path);
      }
    }
    const manifests = allFiles(K8S).filter((f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'));
    for (const file of manifests) expect([relative(ROOT, file), named.has(file)]).toEqual([relative(ROOT, file), true]);
  });

  it('every complete manifest file validates against the Kubernetes schema as it is written', () => {
    const complete = allFiles(K8S).filter((f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml') && !f.includes('/patches/'));
    expect(complete.length).toBeGreaterThan(5);
    for (const file of complete) expect([relative(ROOT, file), schemaProblems(readDocuments(file))]).toEqual([relative(ROOT, file), []]);
  });

  it('the YAML has no duplicate keys (a later one would silently win)', () => {
    for (const file of allFiles(K8S).filter((f) => f.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'), { uniqueKeys: true }))
        expect([relative(ROOT, file), doc.errors]).toEqual([relative(ROOT, file), []]);
    }
  });
});

describe('infra/k8s/base', () => {
  const objects = renderKustomization(BASE);

  it('holds every rule: schema, probes, resources, non-root, env against each config schema, HPAs, migration Jobs', () => {
    expect(kubernetesProblems(objects, { [SECRET]: exampleSecrets() })).toEqual([]);
  });

  it('has a Deployment per deployable, a Service per API, HPAs for the gateway and the worker, a migration Job per database', () => {
    const names = (kind: string) =>
      objects
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.name)
        .sort();
    expect(names('Deployment')).toEqual(DEPLOYABLES.map((d) => d.name).sort());
    expect(names('Service')).toEqual(['events', 'gateway', 'pipelines', 'warehouse']);
    expect(names('HorizontalPodAutoscaler')).toEqual([...AUTOSCALED].sort());
    expect(names('Job')).toEqual(['events-migrate', 'gateway-migrate', 'pipelines-migrate', 'warehouse-migrate']);
    expect(names('ConfigMap')).toEqual(DEPLOYABLES.map((d) => `${d.name}-config`).sort());
  });

  it('commits no Secret: it only refers to platform-secrets, whose keys are those of secrets.env.example', () => {
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const refs = objects.flatMap(containersOf).flatMap((c) => (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : [])));
    expect(new Set(refs.map((r) => r.name))).toEqual(new Set([SECRET]));
    expect(new Set(refs.map((r) => r.key))).toEqual(new Set(Object.keys(exampleSecrets())));
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
  const objects = renderProduction();
  const overlay = readKustomization(PRODUCTION);

  it('holds every rule after its patches (rendered with secrets.env.example)', () => {
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

  it('sets replicas on the fixed-size Deployments and lets the HPAs size the others', () => {
    for (const { name, count } of overlay.replicas ?? []) expect((find(objects, 'Deployment', name).spec as { replicas?: number }).replicas).toBe(count);
    for (const name of AUTOSCALED) {
      expect((find(objects, 'Deployment', name).spec as { replicas?: number }).replicas).toBeUndefined();
      expect((find(objects, 'HorizontalPodAutoscaler', name).spec as { minReplicas: number }).minReplicas).toBeGreaterThanOrEqual(2);
    }
  });

  it('applies its resource patches over the base', () => {
    const base = renderKustomization(BASE);
    const gateway = (objs: K8sObject[]) => containersOf(find(objs, 'Deployment', 'gateway'))[0]?.resources?.requests?.memory;
    expect(gateway(objects)).toBe('256Mi');
    expect(gateway(base)).not.toBe(gateway(objects));
  });

  it('generates platform-secrets from secrets.env, which git ignores and no image receives', () => {
    const generator = overlay.secretGenerator?.find((g) => g.name === SECRET);
    expect(generator?.envs).toEqual(['secrets.env']);
    expect(generator?.options?.labels?.['app.kubernetes.io/component']).toBe('config');
    const secretsFile = relative(ROOT, join(PRODUCTION, 'secrets.env'));
    const ignored = spawnSync('git', ['check-ignore', '-q', '--no-index', secretsFile], { cwd: ROOT });
    expect([secretsFile, ignored.status]).toEqual([secretsFile, 0]);
    const tracked = spawnSync('git', ['ls-files', 'infra/k8s'], { cwd: ROOT, encoding: 'utf8' });
    expect(tracked.stdout.split('\n').filter((f) => f.endsWith('/secrets.env'))).toEqual([]);
  });
});

describe('the Kubernetes rules catch', () => {
  const base = renderKustomization(BASE);
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
});
