import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import {
  DEPLOYABLES,
  IMAGES,
  ROOT,
  containerHostProblems,
  databaseVariables,
  deployable,
  directDatabaseVariable,
  effectivePort,
  entryProblems,
  environmentProblems,
  metricsPortOrProblem,
  redisTopologyProblems,
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
  // KEDA's CRD schema (https://keda.sh): the run workers scale on their queue through it.
  'keda.sh/v1alpha1/ScaledObject': ScaledObject as unknown as Model,
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
    // An optional key that is absent leaves the variable unset, as the kubelet does.
    if (ref.optional === true && data?.[ref.key] === undefined) continue;
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
  problems.push(...redisTopologyProblems(where, env, d.schema));
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

/** Deployables whose replica count follows load: each has one autoscaler (an HPA, or KEDA's ScaledObject). */
export const AUTOSCALED = ['gateway', 'pipelines-worker'];

/**
 * Deployables that KEDA may scale on the depth of the queue they drain: the variables that name the
 * queue and the jobs one process runs at once. Every such process also ticks the pipeline schedules
 * (README, "every run worker ticks"), so it never scales to zero.
 */
export const QUEUE_SCALED: Record<string, { queueVariable: string; concurrencyVariable: string }> = {
  'pipelines-worker': { queueVariable: 'PIPELINES_RUNS_QUEUE', concurrencyVariable: 'WORKER_CONCURRENCY' },
};

/** The queue-depth gauge core's trackQueueDepth registers (packages/core/src/observability/metrics.ts): its name and labels. */
export function queueDepthMetric(): { name: string; labels: string[] } {
  const source = readFileSync(join(ROOT, 'packages/core/src/observability/metrics.ts'), 'utf8');
  const body = source.slice(source.indexOf('export function trackQueueDepth'));
  const name = /name: '([a-z_:]+)'/.exec(body)?.[1];
  const labels = /labelNames: \[([^\]]*)\]/
    .exec(body)?.[1]
    ?.match(/'[^']+'/g)
    ?.map((l) => l.slice(1, -1));
  if (!name || !labels) throw new Error('trackQueueDepth in packages/core/src/observability/metrics.ts registers no gauge with a name and labelNames');
  return { name, labels };
}

interface ScaleTarget {
  scaleTargetRef?: { apiVersion?: string; kind?: string; name?: string };
}
const AUTOSCALER_KINDS = ['HorizontalPodAutoscaler', 'ScaledObject'];
const targetName = (o: K8sObject) => (o.spec as ScaleTarget).scaleTargetRef?.name;
const autoscalersOf = (objects: K8sObject[], deploymentName: string) =>
  objects.filter((o) => AUTOSCALER_KINDS.includes(o.kind) && targetName(o) === deploymentName);

/** The fewest and the most pods a Deployment runs: its replicas, else its autoscaler's bounds (Kubernetes' default: 1). */
export function replicaBounds(objects: K8sObject[], deployment: K8sObject): { min: number; max: number } {
  const replicas = (deployment.spec as { replicas?: number }).replicas;
  if (replicas !== undefined) return { min: replicas, max: replicas };
  const [scaler] = autoscalersOf(objects, deployment.metadata.name);
  const spec = scaler?.spec as { minReplicas?: number; maxReplicas?: number; minReplicaCount?: number; maxReplicaCount?: number } | undefined;
  if (scaler?.kind === 'HorizontalPodAutoscaler') return { min: spec?.minReplicas ?? 1, max: spec?.maxReplicas ?? 1 };
  // KEDA's defaults: 0 and 100.
  if (scaler?.kind === 'ScaledObject') return { min: spec?.minReplicaCount ?? 0, max: spec?.maxReplicaCount ?? 100 };
  return { min: 1, max: 1 };
}

function autoscalerProblems(objects: K8sObject[], refs: Lookup): string[] {
  const problems: string[] = [];
  for (const scaler of objects.filter((o) => AUTOSCALER_KINDS.includes(o.kind))) {
    if (scaler.kind === 'HorizontalPodAutoscaler' && scaler.apiVersion !== 'autoscaling/v2')
      problems.push(`${describe(scaler)}: ${scaler.apiVersion}, expected autoscaling/v2`);
    const ref = (scaler.spec as ScaleTarget).scaleTargetRef;
    // KEDA's scaleTargetRef defaults to a Deployment.
    const kind = ref?.kind ?? (scaler.kind === 'ScaledObject' ? 'Deployment' : undefined);
    const target = find(objects, kind ?? '', ref?.name ?? '');
    if (kind !== 'Deployment' || !target) {
      problems.push(`${describe(scaler)}: targets ${kind} ${ref?.name}, which is not a Deployment of these manifests`);
      continue;
    }
    // A replica count in the manifest would reset the autoscaler's choice on every apply.
    if ((target.spec as { replicas?: number }).replicas !== undefined)
      problems.push(`${describe(scaler)}: its Deployment ${target.metadata.name} sets replicas`);
    const { min, max } = replicaBounds(objects, target);
    if (min > max) problems.push(`${describe(scaler)}: its minimum ${min} is above its maximum ${max}`);
    if (scaler.kind === 'HorizontalPodAutoscaler' && containersOf(target).some((c) => c.resources?.requests?.cpu === undefined))
      problems.push(`${describe(scaler)}: CPU utilization needs CPU requests on ${target.metadata.name}`);
    if (scaler.kind === 'ScaledObject') problems.push(...scaledObjectProblems(scaler, target, min, refs));
  }
  for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
    const scalers = autoscalersOf(objects, deployment.metadata.name);
    if (scalers.length > 1) problems.push(`Deployment ${deployment.metadata.name}: ${scalers.map(describe).join(' and ')} would fight over its replicas`);
  }
  for (const name of AUTOSCALED) {
    if (autoscalersOf(objects, name).length === 0) problems.push(`autoscaler for ${name}: missing (a HorizontalPodAutoscaler or a ScaledObject)`);
  }
  return problems;
}

/**
 * A ScaledObject scales a queue's workers on the backlog their own metric reports (contract
 * section 17): KEDA's prometheus trigger on `max(queue_depth{queue="<their queue>", state=~"waiting|active"})`
 * (every worker reports the whole queue, so a sum would count it once per replica), with the
 * threshold at the jobs one worker runs at once, and never fewer than one worker.
 */
function scaledObjectProblems(scaler: K8sObject, target: K8sObject, min: number, refs: Lookup): string[] {
  const where = describe(scaler);
  const scaled = QUEUE_SCALED[target.metadata.name];
  if (!scaled) return [`${where}: ${target.metadata.name} drains no queue that KEDA may scale it on (QUEUE_SCALED in src/kubernetes.ts)`];
  const problems: string[] = [];
  if (min < 1)
    problems.push(`${where}: minReplicaCount ${min}: every run worker ticks the pipeline schedules, so at zero workers no scheduled run would ever start`);
  const d = deployable(target.metadata.name);
  const container = containersOf(target).find((c) => c.name === d.name);
  const env = container ? environmentOf(where, container, refs).env : {};
  const queue = d.schema.shape[scaled.queueVariable]?.safeParse(env[scaled.queueVariable]).data;
  const concurrency = d.schema.shape[scaled.concurrencyVariable]?.safeParse(env[scaled.concurrencyVariable]).data;
  const triggers = (scaler.spec as { triggers?: Array<{ type?: string; metricType?: string; metadata?: Record<string, string> }> }).triggers ?? [];
  const prometheus = triggers.filter((t) => t.type === 'prometheus');
  if (prometheus.length !== 1 || triggers.length !== 1)
    return [...problems, `${where}: expected one trigger, of type prometheus (on the queue depth the workers export)`];
  const { metricType, metadata = {} } = prometheus[0] ?? {};
  if (metricType !== undefined && metricType !== 'AverageValue')
    problems.push(`${where}: metricType ${metricType}; AverageValue gives replicas = backlog / threshold`);
  if (!/^https?:\/\/[^/]+/.test(metadata.serverAddress ?? ''))
    problems.push(`${where}: serverAddress ${metadata.serverAddress} is not the URL of a Prometheus`);
  const metric = queueDepthMetric();
  const query = (metadata.query ?? '').replace(/\s+/g, '');
  const selector = new RegExp(`^max\\(${metric.name}\\{([^}]*)\\}\\)$`).exec(query);
  if (!selector) {
    problems.push(
      `${where}: query ${metadata.query} is not max(${metric.name}{...}): every worker reports the whole queue, so anything but the max of their reports misreads the backlog`,
    );
  } else {
    const matchers: Record<string, string> = Object.fromEntries((selector[1] ?? '').split(',').map((m): [string, string] => [m.split(/=~|=/)[0] ?? '', m]));
    for (const name of Object.keys(matchers)) {
      if (!metric.labels.includes(name))
        problems.push(`${where}: query selects label ${name}, which ${metric.name} does not have (${metric.labels.join(', ')})`);
    }
    if (matchers.queue !== `queue="${String(queue)}"`)
      problems.push(`${where}: query does not select queue="${String(queue)}" (${scaled.queueVariable} of ${d.name})`);
    const states = /^state=~"([^"]*)"$/
      .exec(matchers.state ?? '')?.[1]
      ?.split('|')
      .sort();
    if (states?.join('|') !== 'active|waiting')
      problems.push(`${where}: query must count state=~"waiting|active" (the jobs that need a worker now; delayed and failed ones do not)`);
  }
  if (metadata.threshold !== String(concurrency))
    problems.push(
      `${where}: threshold ${metadata.threshold} is not ${scaled.concurrencyVariable} of ${d.name} (${String(concurrency)}): one worker per ${String(concurrency)} jobs`,
    );
  return problems;
}

/**
 * Every Deployment has one PodDisruptionBudget, by maxUnavailable: a drain can always evict a pod of a
 * one-replica Deployment (a minAvailable would block it forever), and one of two or more keeps serving.
 */
function disruptionProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget');
  for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
    const where = describe(deployment);
    const labels = podOf(deployment)?.labels ?? {};
    const covering = budgets.filter((b) => matches((b.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels ?? {}, labels));
    if (covering.length !== 1) {
      problems.push(`${where}: ${covering.length} PodDisruptionBudgets select its pods, expected one`);
      continue;
    }
    const spec = covering[0]?.spec as { minAvailable?: number | string; maxUnavailable?: number | string };
    if (spec.minAvailable !== undefined)
      problems.push(`${describe(covering[0]!)}: minAvailable blocks a drain for good when no more pods than that run; set maxUnavailable`);
    const { min } = replicaBounds(objects, deployment);
    if (typeof spec.maxUnavailable !== 'number' || spec.maxUnavailable < 1)
      problems.push(`${describe(covering[0]!)}: maxUnavailable ${String(spec.maxUnavailable)}, expected a number of pods, at least 1`);
    else if (min >= 2 && spec.maxUnavailable >= min)
      problems.push(`${describe(covering[0]!)}: maxUnavailable ${spec.maxUnavailable} lets a drain take all ${min} pods of ${deployment.metadata.name}`);
  }
  return problems;
}

/** Deployments that are no deployable of the platform (PgBouncer): probes, resources, non-root, a grace period above preStop. */
function supportDeploymentProblems(objects: K8sObject[]): string[] {
  const names = new Set(DEPLOYABLES.map((d) => d.name));
  return objects
    .filter((o) => o.kind === 'Deployment' && !names.has(o.metadata.name))
    .flatMap((deployment) => {
      const where = describe(deployment);
      const pod = podOf(deployment);
      if (!pod) return [`${where}: no pod template`];
      const problems = securityProblems(where, pod);
      for (const container of pod.spec.containers) {
        problems.push(...resourceProblems(`${where} (${container.name})`, container));
        if (!container.readinessProbe) problems.push(`${where}: container ${container.name} has no readinessProbe`);
        if (!container.livenessProbe) problems.push(`${where}: container ${container.name} has no livenessProbe`);
        if ((pod.spec.terminationGracePeriodSeconds ?? 30) <= preStopSeconds(container))
          problems.push(`${where}: terminationGracePeriodSeconds does not exceed the preStop sleep`);
      }
      return problems;
    });
}

/** The PostgreSQL pooler of the production overlay: a Deployment and a Service of this name. */
export const POOLER = 'pgbouncer';

/** An ini file as PgBouncer reads it: `[section]`, `key = value`, `;` and `#` comments. */
export function parseIni(text: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let section = '';
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith(';') || trimmed.startsWith('#')) continue;
    const header = /^\[(.+)\]$/.exec(trimmed);
    if (header) section = header[1] ?? '';
    else {
      const at = trimmed.indexOf('=');
      (sections[section] ??= {})[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
    }
  }
  return sections;
}

const serviceOfHost = (objects: K8sObject[], host: string) => find(objects, 'Service', host.split('.')[0] ?? '');
const throughPooler = (objects: K8sObject[], url: URL) => url.hostname.split('.')[0] === POOLER && serviceOfHost(objects, url.hostname) !== undefined;
const parseUrl = (value: string | undefined) => {
  try {
    return value ? new URL(value) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * PostgreSQL through PgBouncer in transaction mode (contract section 17): where a process's
 * `*_DATABASE_URL` reaches the pooler's Service, its `*_DIRECT_DATABASE_URL` reaches the PostgreSQL
 * PgBouncer forwards to, as the same user and database; PgBouncer knows that user, pools in
 * transaction mode, and takes every client connection of the platform at its largest scale
 * (replicas x DATABASE_POOL_MAX).
 */
function poolerProblems(objects: K8sObject[], refs: Lookup): string[] {
  const problems: string[] = [];
  const pooler = find(objects, 'Deployment', POOLER);
  const service = find(objects, 'Service', POOLER);
  const pod = pooler && podOf(pooler);
  let ini: Record<string, Record<string, string>> | undefined;
  let users: Map<string, string> | undefined;
  if (pod) {
    const sources = (pod.spec.volumes ?? []).flatMap((v) => [
      ...(v.configMap ? [{ kind: 'ConfigMap', name: v.configMap.name }] : []),
      ...(v.secret ? [{ kind: 'Secret', name: v.secret.secretName }] : []),
      ...(v.projected?.sources ?? []).flatMap((s) => [
        ...(s.configMap ? [{ kind: 'ConfigMap', name: s.configMap.name }] : []),
        ...(s.secret ? [{ kind: 'Secret', name: s.secret.name }] : []),
      ]),
    ]);
    const files: Record<string, string> = {};
    for (const source of sources) Object.assign(files, (source.kind === 'ConfigMap' ? refs.configMaps : refs.secrets).get(source.name) ?? {});
    if (files['pgbouncer.ini'] === undefined) problems.push(`Deployment ${POOLER}: mounts no pgbouncer.ini`);
    else ini = parseIni(files['pgbouncer.ini']);
    const settings = ini?.pgbouncer ?? {};
    if (ini && settings.pool_mode !== 'transaction')
      problems.push(`Deployment ${POOLER}: pool_mode ${settings.pool_mode}, expected transaction (contract section 17)`);
    const authFile = settings.auth_file?.split('/').pop() ?? '';
    if (ini && files[authFile] === undefined) problems.push(`Deployment ${POOLER}: mounts no ${authFile || 'auth_file'}`);
    users = new Map(
      (files[authFile] ?? '').split(/\r?\n/).flatMap((line) => {
        const entry = /^"([^"]+)"\s+"([^"]*)"/.exec(line.trim());
        return entry ? [[entry[1] ?? '', entry[2] ?? ''] as [string, string]] : [];
      }),
    );
    const container = pod.spec.containers[0];
    const servicePort = (service?.spec as { ports?: Array<{ targetPort?: number | string }> } | undefined)?.ports?.[0]?.targetPort;
    if (ini && container && portNumber(container, servicePort) !== Number(settings.listen_port))
      problems.push(`Service ${POOLER}: targets port ${String(servicePort)}, PgBouncer listens on ${settings.listen_port}`);
  }

  let clients = 0;
  for (const d of DEPLOYABLES) {
    const deployment = find(objects, 'Deployment', d.name);
    const container = deployment && containersOf(deployment).find((c) => c.name === d.name);
    if (!deployment || !container) continue;
    const where = `Deployment ${d.name}`;
    const { env } = environmentOf(where, container, refs);
    for (const variable of databaseVariables(d.schema)) {
      const url = parseUrl(env[variable]);
      if (!url) continue;
      const target = serviceOfHost(objects, url.hostname);
      if (target) {
        const port = Number(url.port || 5432);
        if (!(target.spec as { ports?: Array<{ port: number }> }).ports?.some((p) => p.port === port))
          problems.push(`${where}: ${variable} points at ${url.hostname}:${port}, a port its Service does not have`);
      }
      if (!throughPooler(objects, url)) continue;
      if (!pooler) problems.push(`${where}: ${variable} points at ${url.hostname}, which is no Deployment`);
      const direct = directDatabaseVariable(variable);
      const directUrl = parseUrl(env[direct]);
      if (!directUrl)
        problems.push(
          `${where}: ${variable} goes through PgBouncer in transaction mode but ${direct} is not set (migrations and session work need PostgreSQL itself)`,
        );
      else if (throughPooler(objects, directUrl)) problems.push(`${where}: ${direct} goes through PgBouncer; it must reach PostgreSQL itself`);
      else {
        if (directUrl.pathname !== url.pathname || directUrl.username !== url.username)
          problems.push(`${where}: ${direct} is not the database and user of ${variable} (${url.username}@${url.pathname.slice(1)})`);
        const database = ini?.databases?.[url.pathname.slice(1)] ?? ini?.databases?.['*'];
        const backend = Object.fromEntries((database ?? '').split(/\s+/).map((kv) => kv.split('=') as [string, string]));
        if (ini && (backend.host !== directUrl.hostname || Number(backend.port ?? 5432) !== Number(directUrl.port || 5432)))
          problems.push(
            `${where}: ${direct} reaches ${directUrl.host}, but PgBouncer forwards ${url.pathname.slice(1)} to ${backend.host}:${backend.port ?? 5432}`,
          );
      }
      if (users && !users.has(decodeURIComponent(url.username))) problems.push(`${where}: ${variable}'s user ${url.username} is not in PgBouncer's auth_file`);
      else if (
        users &&
        url.password &&
        !/^(md5|SCRAM-SHA-256\$)/.test(users.get(decodeURIComponent(url.username)) ?? '') &&
        users.get(decodeURIComponent(url.username)) !== decodeURIComponent(url.password)
      )
        problems.push(`${where}: ${variable}'s password is not the one PgBouncer's auth_file has for ${url.username}`);
      const poolMax = d.schema.shape.DATABASE_POOL_MAX?.safeParse(env.DATABASE_POOL_MAX).data;
      if (typeof poolMax !== 'number') problems.push(`${where}: DATABASE_POOL_MAX is not a variable of its config schema (contract section 17)`);
      else clients += replicaBounds(objects, deployment).max * poolMax;
    }
  }
  const maxClients = Number(ini?.pgbouncer?.max_client_conn ?? 100);
  if (ini && maxClients < clients)
    problems.push(
      `Deployment ${POOLER}: max_client_conn ${maxClients} is below the ${clients} connections the processes open at their largest scale (replicas x DATABASE_POOL_MAX)`,
    );
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
      // Migrations run on the direct URL where it is set (contract section 17).
      const direct = directDatabaseVariable(variable);
      const used = env[direct] !== undefined ? direct : variable;
      const url = parseUrl(env[used]);
      if (!env[used]) problems.push(`${where}: ${variable} is not set`);
      else if (!m.schema.shape[used]?.safeParse(env[used]).success || !url) problems.push(`${where}: ${used} is not a valid URL`);
      else if (throughPooler(objects, url))
        problems.push(`${where}: migrates through PgBouncer (${used}); migrations need a session of their own: set ${direct} to PostgreSQL itself`);
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
    ...supportDeploymentProblems(objects),
    ...serviceProblems(objects),
    ...disruptionProblems(objects),
    ...autoscalerProblems(objects, refs),
    ...poolerProblems(objects, refs),
    ...migrationProblems(objects, refs),
    ...labelProblems(objects),
  ];
}
