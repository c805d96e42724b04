import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import {
  DEPLOYABLES,
  IMAGES,
  containerHostProblems,
  databaseVariables,
  effectivePort,
  entryProblems,
  environmentProblems,
  metricsPortOrProblem,
  shutdownSeconds,
  type Deployable,
} from './deployables';
import { imageEnvironment } from './dockerfile';
import { type Container, type K8sObject, containersOf, imageName, podOf } from './kustomize';

type Model = new (data: unknown) => { validate(): void };

/** The kubernetes-models class of every kind the manifests may contain. */
const MODELS: Record<string, Model> = {
  'v1/ConfigMap': ConfigMap as unknown as Model,
  'v1/Secret': Secret as unknown as Model,
  'v1/Service': Service as unknown as Model,
  'v1/Namespace': Namespace as unknown as Model,
  'apps/v1/Deployment': Deployment as unknown as Model,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler as unknown as Model,
  'batch/v1/Job': Job as unknown as Model,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as unknown as Model,
};

export const describe = (o: K8sObject) => `${o.kind} ${o.metadata?.name}`;

/** Each object against the Kubernetes OpenAPI schema, through its kubernetes-models class. */
export function schemaProblems(objects: K8sObject[]): string[] {
  return objects.flatMap((object) => {
    const model = MODELS[`${object.apiVersion}/${object.kind}`];
    if (!model) return [`${describe(object)}: ${object.apiVersion} ${object.kind} is not a kind these manifests use (add its model to src/kubernetes.ts)`];
    try {
      new model(object).validate();
      return [];
    } catch (err) {
      return [`${describe(object)}: ${(err as Error).message}`];
    }
  });
}

/** CPU in cores, memory in bytes. */
export function quantity(value: string | number): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(value);
  if (!match) return Number.NaN;
  const factor = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * factor;
}

const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

function portNumber(container: Container, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort ?? (port && /^\d+$/.test(port) ? Number(port) : undefined);
}

interface Lookup {
  configMaps: Map<string, Record<string, string>>;
  secrets: Map<string, Record<string, string>>;
}

function lookup(objects: K8sObject[], extraSecrets: Record<string, Record<string, string>>): Lookup {
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, (o.data as Record<string, string>) ?? {}]));
  const secrets = new Map(Object.entries(extraSecrets));
  for (const o of objects.filter((x) => x.kind === 'Secret')) {
    const data = Object.fromEntries(Object.entries((o.data as Record<string, string>) ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    secrets.set(o.metadata.name, { ...data, ...((o.stringData as Record<string, string>) ?? {}) });
  }
  return { configMaps, secrets };
}

/** The environment a container gets, with the names that cannot be resolved as problems. */
function environmentOf(where: string, container: Container, refs: Lookup): { env: Record<string, string>; problems: string[] } {
  const env: Record<string, string> = {};
  const problems: string[] = [];
  for (const from of container.envFrom ?? []) {
    const name = from.configMapRef?.name ?? from.secretRef?.name ?? '';
    const data = from.configMapRef ? refs.configMaps.get(name) : refs.secrets.get(name);
    if (!data) problems.push(`${where}: envFrom ${from.configMapRef ? 'ConfigMap' : 'Secret'} ${name} does not exist`);
    Object.assign(env, data ?? {});
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef ?? variable.valueFrom?.configMapKeyRef;
    if (!ref) {
      env[variable.name] = variable.value ?? '';
      continue;
    }
    const kind = variable.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
    const data = kind === 'Secret' ? refs.secrets.get(ref.name) : refs.configMaps.get(ref.name);
    if (!data) problems.push(`${where}: ${variable.name} refers to ${kind} ${ref.name}, which does not exist`);
    else if (data[ref.key] === undefined) problems.push(`${where}: ${variable.name} refers to key ${ref.key} of ${kind} ${ref.name}, which it does not have`);
    env[variable.name] = data?.[ref.key] ?? '';
  }
  return { env, problems };
}

function securityProblems(where: string, pod: NonNullable<ReturnType<typeof podOf>>): string[] {
  const problems: string[] = [];
  if (pod.spec.securityContext?.runAsNonRoot !== true) problems.push(`${where}: pod securityContext.runAsNonRoot is not true`);
  // `USER node` is a name: without a numeric runAsUser the kubelet refuses to start a runAsNonRoot pod.
  if (!pod.spec.securityContext?.runAsUser) problems.push(`${where}: pod securityContext.runAsUser is not a non-root uid (the image's node user is 1000)`);
  for (const container of pod.spec.containers) {
    const context = container.securityContext ?? {};
    if (context.runAsNonRoot === false || context.runAsUser === 0) problems.push(`${where}: container ${container.name} may run as root`);
    if (context.allowPrivilegeEscalation !== false) problems.push(`${where}: container ${container.name} does not set allowPrivilegeEscalation: false`);
  }
  return problems;
}

function resourceProblems(where: string, container: Container): string[] {
  const problems: string[] = [];
  for (const resource of ['cpu', 'memory']) {
    const request = container.resources?.requests?.[resource];
    const limit = container.resources?.limits?.[resource];
    if (request === undefined) problems.push(`${where}: no ${resource} request`);
    if (limit === undefined) problems.push(`${where}: no ${resource} limit`);
    if (request !== undefined && limit !== undefined && quantity(request) > quantity(limit))
      problems.push(`${where}: ${resource} request ${request} above its limit ${limit}`);
  }
  return problems;
}

/**
 * GET /metrics on its own port (contract section 12): a container port named `metrics`, and the
 * pod annotations Prometheus's pod discovery scrapes by (`prometheus.io/scrape`, `/port`, `/path`).
 */
function metricsProblems(
  where: string,
  d: Deployable,
  pod: NonNullable<ReturnType<typeof podOf>>,
  container: Container,
  env: Record<string, string>,
  port: number,
): string[] {
  const metricsPort = metricsPortOrProblem(where, d, env);
  if (typeof metricsPort === 'string') return [metricsPort];
  const problems: string[] = [];
  if (metricsPort === port) problems.push(`${where}: serves /metrics on its API port ${port}; ${d.metricsPortVariable} must differ`);
  if (!container.ports?.some((p) => p.name === 'metrics' && p.containerPort === metricsPort)) {
    problems.push(`${where}: no containerPort ${metricsPort} named metrics (${d.metricsPortVariable})`);
  }
  const annotations = pod.annotations;
  if (annotations['prometheus.io/scrape'] !== 'true') problems.push(`${where}: pod annotation prometheus.io/scrape is not "true"`);
  if (annotations['prometheus.io/port'] !== String(metricsPort)) {
    problems.push(
      `${where}: pod annotation prometheus.io/port is ${annotations['prometheus.io/port'] ?? 'missing'}, expected ${metricsPort} (${d.metricsPortVariable})`,
    );
  }
  if ((annotations['prometheus.io/path'] ?? '/metrics') !== '/metrics')
    problems.push(`${where}: pod annotation prometheus.io/path is ${annotations['prometheus.io/path']}, expected /metrics`);
  return problems;
}

function preStopSeconds(container: Container): number {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep) return preStop.sleep.seconds;
  const command = preStop?.exec?.command ?? [];
  return command[0] === 'sleep' ? Number(command[1]) : 0;
}

function deploymentProblems(d: Deployable, objects: K8sObject[], refs: Lookup, ports: Map<string, number>): string[] {
  const deployment = find(objects, 'Deployment', d.name);
  if (!deployment) return [`Deployment ${d.name}: missing`];
  const where = `Deployment ${d.name}`;
  const pod = podOf(deployment);
  const container = pod?.spec.containers.find((c) => c.name === d.name);
  if (!pod || !container) return [`${where}: no container named ${d.name}`];
  const problems: string[] = [];

  const image = imageName(container.image);
  if (image !== d.image && !image.endsWith(`/${d.image}`)) problems.push(`${where}: runs image ${container.image}, expected ${d.image}`);
  if (container.args) problems.push(`${where}: args would be appended to the image CMD`);
  if (container.command) {
    if (container.command.join(' ') !== `node --enable-source-maps ${d.entry}`)
      problems.push(`${where}: command ${JSON.stringify(container.command)}, expected node --enable-source-maps ${d.entry}`);
    problems.push(...entryProblems(where, d.dir, container.command.at(-1) ?? ''));
  } else if (d.entry !== 'dist/main.js') {
    problems.push(`${where}: no command, so it would run the image CMD (dist/main.js), not ${d.entry}`);
  }

  const { env, problems: envProblems } = environmentOf(where, container, refs);
  problems.push(...envProblems, ...environmentProblems(where, env, d.schema, { complete: true }));
  problems.push(...containerHostProblems(where, d, env, imageEnvironment(d.dir)));

  const port = effectivePort(d, env);
  if (!container.ports?.some((p) => p.containerPort === port)) problems.push(`${where}: no containerPort ${port} (${d.portVariable})`);
  for (const [probe, path] of [
    ['readinessProbe', '/readyz'],
    ['livenessProbe', '/healthz'],
  ] as const) {
    const get = container[probe]?.httpGet;
    if (!get) problems.push(`${where}: no ${probe} (httpGet ${path})`);
    else if (get.path !== path || portNumber(container, get.port) !== port) {
      problems.push(`${where}: ${probe} GETs ${get.path} on port ${String(get.port)}, expected ${path} on ${port} (${d.portVariable})`);
    }
  }
  problems.push(...metricsProblems(where, d, pod, container, env, port));
  problems.push(...resourceProblems(where, container), ...securityProblems(where, pod));

  const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
  const needed = preStopSeconds(container) + shutdownSeconds(d, env);
  if (grace <= needed)
    problems.push(
      `${where}: terminationGracePeriodSeconds ${grace} does not exceed preStop + shutdown deadline (${needed} s): SIGKILL would cut the graceful shutdown`,
    );

  // An API is reached through a Service on its port; a URL of a Service (the gateway's upstreams)
  // must reach the port the deployable behind it listens on.
  if (
    d.entry === 'dist/main.js' &&
    !objects.some((o) => o.kind === 'Service' && serviceTargets(objects, o).some((t) => t.deployment === d.name && t.target === port))
  ) {
    problems.push(`${where}: no Service reaches its port ${port}`);
  }
  for (const [variable, value] of Object.entries(env)) {
    if (!/^https?:\/\//.test(value)) continue;
    const url = new URL(value);
    const service = find(objects, 'Service', url.hostname.split('.')[0] ?? '');
    const reached = service && serviceTargets(objects, service).find((t) => t.port === Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
    const upstream = reached && DEPLOYABLES.find((x) => x.name === reached.deployment);
    if (!service) problems.push(`${where}: ${variable} points at ${url.hostname}, which is not a Service of these manifests`);
    else if (!reached || !upstream || reached.target !== ports.get(upstream.name)) {
      problems.push(`${where}: ${variable} (${value}) does not reach the port ${url.hostname} listens on (${upstream ? ports.get(upstream.name) : '?'})`);
    }
  }
  return problems;
}

/** Where each port of a Service leads: the Deployment it selects and the container port. */
function serviceTargets(objects: K8sObject[], service: K8sObject): Array<{ port: number; deployment?: string; target?: number }> {
  const spec = service.spec as { selector?: Record<string, string>; ports?: Array<{ port: number; targetPort?: number | string }> };
  const deployment = objects.find((o) => o.kind === 'Deployment' && matches(spec.selector ?? {}, podOf(o)?.labels ?? {}));
  const container = deployment && podOf(deployment)?.spec.containers[0];
  return (spec.ports ?? []).map((p) => ({
    port: p.port,
    deployment: deployment?.metadata.name,
    target: container && portNumber(container, p.targetPort ?? p.port),
  }));
}

function serviceProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const workloads = objects.filter((o) => podOf(o));
  for (const service of objects.filter((o) => o.kind === 'Service')) {
    const spec = service.spec as { selector?: Record<string, string>; ports?: Array<{ port: number; targetPort?: number | string }> };
    const selected = workloads.filter((w) => matches(spec.selector ?? {}, podOf(w)?.labels ?? {}));
    const deployments = selected.filter((w) => w.kind === 'Deployment');
    if (deployments.length !== 1)
      problems.push(`${describe(service)}: selects ${deployments.length} Deployments (${deployments.map((w) => w.metadata.name).join(', ')}), expected one`);
    for (const other of selected.filter((w) => w.kind !== 'Deployment')) problems.push(`${describe(service)}: also selects the pods of ${describe(other)}`);
    const container = deployments[0] && podOf(deployments[0])?.spec.containers[0];
    for (const { port, target } of serviceTargets(objects, service)) {
      if (!container?.ports?.some((p) => p.containerPort === target)) problems.push(`${describe(service)}: port ${port} targets no port of its pods`);
    }
  }
  for (const pdb of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
    const selector = (pdb.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels ?? {};
    const selected = workloads.filter((w) => matches(selector, podOf(w)?.labels ?? {}));
    if (selected.length !== 1 || selected[0]?.kind !== 'Deployment')
      problems.push(`${describe(pdb)}: selects ${selected.map(describe).join(', ') || 'nothing'}, expected one Deployment`);
  }
  return problems;
}

/** Deployables whose replica count follows load. */
export const AUTOSCALED = ['gateway', 'pipelines-worker'];

function autoscalerProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
  for (const hpa of hpas) {
    if (hpa.apiVersion !== 'autoscaling/v2') problems.push(`${describe(hpa)}: ${hpa.apiVersion}, expected autoscaling/v2`);
    const spec = hpa.spec as { scaleTargetRef?: { kind?: string; name?: string }; minReplicas?: number; maxReplicas?: number };
    const target = find(objects, spec.scaleTargetRef?.kind ?? '', spec.scaleTargetRef?.name ?? '');
    if (spec.scaleTargetRef?.kind !== 'Deployment' || !target) {
      problems.push(`${describe(hpa)}: targets ${spec.scaleTargetRef?.kind} ${spec.scaleTargetRef?.name}, which is not a Deployment of these manifests`);
      continue;
    }
    // A replica count in the manifest would reset the autoscaler's choice on every apply.
    if ((target.spec as { replicas?: number }).replicas !== undefined) problems.push(`${describe(hpa)}: its Deployment ${target.metadata.name} sets replicas`);
    if ((spec.minReplicas ?? 1) > (spec.maxReplicas ?? 0)) problems.push(`${describe(hpa)}: minReplicas above maxReplicas`);
    if (containersOf(target).some((c) => c.resources?.requests?.cpu === undefined))
      problems.push(`${describe(hpa)}: CPU utilization needs CPU requests on ${target.metadata.name}`);
  }
  for (const name of AUTOSCALED) {
    if (!hpas.some((h) => (h.spec as { scaleTargetRef?: { name?: string } }).scaleTargetRef?.name === name))
      problems.push(`HorizontalPodAutoscaler for ${name}: missing`);
  }
  return problems;
}

function migrationProblems(objects: K8sObject[], refs: Lookup): string[] {
  const problems: string[] = [];
  const expected = new Set(IMAGES.map((m) => `${m.name}-migrate`));
  for (const job of objects.filter((o) => o.kind === 'Job')) {
    if (!expected.has(job.metadata.name)) problems.push(`${describe(job)}: not a migration Job of a deployable (expected ${[...expected].join(', ')})`);
  }
  for (const m of IMAGES) {
    const where = `Job ${m.name}-migrate`;
    const job = find(objects, 'Job', `${m.name}-migrate`);
    const pod = job && podOf(job);
    const container = pod?.spec.containers[0];
    if (!job || !pod || !container) {
      problems.push(`${where}: missing (migrations of ${m.dir})`);
      continue;
    }
    if (container.command?.join(' ') !== 'node dist/migrate.js')
      problems.push(`${where}: runs ${JSON.stringify(container.command)}, expected ["node", "dist/migrate.js"]`);
    else problems.push(...entryProblems(where, m.dir, 'dist/migrate.js'));
    const image = imageName(container.image);
    if (image !== m.image && !image.endsWith(`/${m.image}`)) problems.push(`${where}: runs image ${container.image}, expected ${m.image}`);
    if (!['Never', 'OnFailure'].includes(pod.spec.restartPolicy ?? '')) problems.push(`${where}: restartPolicy must be Never or OnFailure`);
    const { env, problems: envProblems } = environmentOf(where, container, refs);
    problems.push(...envProblems, ...environmentProblems(where, env, m.schema, { complete: false }));
    for (const variable of databaseVariables(m.schema)) {
      if (!env[variable]) problems.push(`${where}: ${variable} is not set`);
      else if (!m.schema.shape[variable]?.safeParse(env[variable]).success) problems.push(`${where}: ${variable} is not a valid URL`);
    }
    problems.push(...resourceProblems(where, container), ...securityProblems(where, pod));
  }
  return problems;
}

/** The two-phase deploy of infra/README.md selects config and migrations by this label. */
function labelProblems(objects: K8sObject[]): string[] {
  const wanted: Record<string, string> = { ConfigMap: 'config', Secret: 'config', Job: 'migration' };
  return objects
    .filter((o) => wanted[o.kind] && o.metadata.labels?.['app.kubernetes.io/component'] !== wanted[o.kind])
    .map((o) => `${describe(o)}: label app.kubernetes.io/component is not ${wanted[o.kind]} (the first deploy phase selects it)`);
}

/**
 * Everything the rendered manifests must hold for the deployables, as a list of problems (empty: none).
 * `secrets`: the data of Secrets the manifests reference but do not contain (the git-ignored one).
 */
export function kubernetesProblems(objects: K8sObject[], secrets: Record<string, Record<string, string>> = {}): string[] {
  const refs = lookup(objects, secrets);
  const ports = new Map<string, number>();
  for (const d of DEPLOYABLES) {
    const deployment = find(objects, 'Deployment', d.name);
    const container = deployment && podOf(deployment)?.spec.containers.find((c) => c.name === d.name);
    if (container) ports.set(d.name, effectivePort(d, environmentOf('', container, refs).env));
  }
  return [
    ...schemaProblems(objects),
    ...DEPLOYABLES.flatMap((d) => deploymentProblems(d, objects, refs, ports)),
    ...serviceProblems(objects),
    ...autoscalerProblems(objects),
    ...migrationProblems(objects, refs),
    ...labelProblems(objects),
  ];
}
