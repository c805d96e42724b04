import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from './deployables';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

type Generator = {
  name: string;
  envs?: string[];
  literals?: string[];
  /** `path` or `key=path`: the file's content under its name (or `key`). */
  files?: string[];
  type?: string;
  options?: { labels?: Record<string, string> };
};

export interface PatchTarget {
  kind?: string;
  name?: string;
  labelSelector?: string;
}

export interface Kustomization {
  apiVersion?: string;
  kind?: 'Kustomization' | 'Component';
  resources?: string[];
  components?: string[];
  namespace?: string;
  images?: Array<{ name: string; newName?: string; newTag?: string; digest?: string }>;
  replicas?: Array<{ name: string; count: number }>;
  patches?: Array<{ path?: string; patch?: string; target?: PatchTarget }>;
  secretGenerator?: Generator[];
  configMapGenerator?: Generator[];
}

/** The kustomization fields this renderer implements; any other one fails loudly instead of being ignored. */
const SUPPORTED = new Set([
  'apiVersion',
  'kind',
  'resources',
  'components',
  'namespace',
  'images',
  'replicas',
  'patches',
  'secretGenerator',
  'configMapGenerator',
]);

export function readKustomization(dir: string): Kustomization {
  return parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
}

/** Every YAML document of a file, empty ones dropped; a syntax error throws. */
export function readDocuments(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${relative(ROOT, file)}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as K8sObject | null;
    return value ? [value] : [];
  });
}

export interface RenderOptions {
  /** The file a generator reads instead of one that is absent (the git-ignored secrets.env). */
  fileFallback?: (path: string) => string | undefined;
}

/**
 * `kustomize build` for the subset of kustomize these manifests use: resources (files and
 * directories), components, namespace, images, replicas, patches from files (strategic merge,
 * `$patch: delete` of a whole object, or JSON 6902 operations; with a target by kind, name and label
 * selector), secretGenerator and configMapGenerator from env files and files. Kustomize's order:
 * resources, then each component (its resources, generators and patches over everything so far),
 * then the generators, patches, replicas, images and namespace of the kustomization. Generated names
 * keep no hash suffix. The tests compare it with `kubectl kustomize` where kubectl is installed.
 */
export function renderKustomization(dir: string, options: RenderOptions = {}): K8sObject[] {
  return build(dir, 'Kustomization', [], options);
}

function build(dir: string, kind: 'Kustomization' | 'Component', objects: K8sObject[], options: RenderOptions): K8sObject[] {
  const k = readKustomization(dir);
  const where = relative(ROOT, join(dir, 'kustomization.yaml'));
  for (const field of Object.keys(k)) {
    if (!SUPPORTED.has(field)) throw new Error(`${where}: ${field} is not implemented by the test renderer (src/kustomize.ts)`);
  }
  if ((k.kind ?? 'Kustomization') !== kind) throw new Error(`${where}: is a ${k.kind ?? 'Kustomization'}, used as a ${kind}`);
  if (kind === 'Component' && k.namespace) throw new Error(`${where}: a component sets no namespace here`);

  for (const resource of k.resources ?? []) {
    const path = resolve(dir, resource);
    if (!existsSync(path)) throw new Error(`${where}: resource ${resource} does not exist`);
    objects.push(...(statSync(path).isDirectory() ? build(path, 'Kustomization', [], options) : readDocuments(path)));
  }
  for (const component of k.components ?? []) {
    const path = resolve(dir, component);
    if (!existsSync(join(path, 'kustomization.yaml'))) throw new Error(`${where}: component ${component} does not exist`);
    build(path, 'Component', objects, options);
  }

  for (const [generatorKind, generators] of [
    ['Secret', k.secretGenerator],
    ['ConfigMap', k.configMapGenerator],
  ] as const) {
    for (const generator of generators ?? []) objects.push(generate(dir, where, generatorKind, generator, options));
  }

  for (const entry of k.patches ?? []) {
    if (!entry.path || entry.patch) throw new Error(`${where}: only patches from a file are implemented`);
    const file = resolve(dir, entry.path);
    if (!existsSync(file)) throw new Error(`${where}: patch ${entry.path} does not exist`);
    applyPatchFile(file, objects, entry.target);
  }

  for (const { name, count } of k.replicas ?? []) {
    const target = objects.find((o) => ['Deployment', 'StatefulSet', 'ReplicaSet'].includes(o.kind) && o.metadata.name === name);
    if (!target) throw new Error(`${where}: replicas for ${name}, which is not a Deployment of the resources`);
    (target.spec as Record<string, unknown>).replicas = count;
  }

  for (const image of k.images ?? []) {
    let used = false;
    for (const container of objects.flatMap(containersOf)) {
      if (imageName(container.image) !== image.name) continue;
      used = true;
      container.image = (image.newName ?? image.name) + (image.digest ? `@${image.digest}` : image.newTag ? `:${image.newTag}` : imageTag(container.image));
    }
    if (!used) throw new Error(`${where}: images entry ${image.name} matches no container`);
  }

  if (k.namespace) {
    for (const object of objects) if (object.kind !== 'Namespace') object.metadata.namespace = k.namespace;
  }
  return objects;
}

function generate(dir: string, where: string, kind: 'Secret' | 'ConfigMap', generator: Generator, options: RenderOptions): K8sObject {
  if (generator.literals) throw new Error(`${where}: ${kind} generator ${generator.name}: literals are not implemented`);
  const read = (relativePath: string) => {
    let file = resolve(dir, relativePath);
    if (!existsSync(file)) file = options.fileFallback?.(file) ?? file;
    if (!existsSync(file)) throw new Error(`${where}: ${kind} generator ${generator.name}: ${relativePath} does not exist`);
    return readFileSync(file, 'utf8');
  };
  const data: Record<string, string> = {};
  for (const env of generator.envs ?? []) Object.assign(data, parseEnvFile(read(env)));
  for (const entry of generator.files ?? []) {
    const at = entry.indexOf('=');
    const [key, path] = at > 0 ? [entry.slice(0, at), entry.slice(at + 1)] : [basename(entry), entry];
    data[key] = read(path);
  }
  const metadata: K8sObject['metadata'] = { name: generator.name };
  if (generator.options?.labels) metadata.labels = { ...generator.options.labels };
  if (kind === 'ConfigMap') return { apiVersion: 'v1', kind, metadata, data };
  const encoded = Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
  return { apiVersion: 'v1', kind, metadata, type: generator.type ?? 'Opaque', data: encoded };
}

/**
 * A patch file: a list of JSON 6902 operations (which needs a target), or strategic-merge documents,
 * each applied to the object of its kind and name, or to every object the target selects.
 */
function applyPatchFile(file: string, objects: K8sObject[], target: PatchTarget | undefined): void {
  const where = relative(ROOT, file);
  const parsed = parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => doc.toJS() as unknown);
  if (parsed.length === 1 && Array.isArray(parsed[0])) {
    if (!target) throw new Error(`${where}: JSON 6902 operations need a target`);
    const selected = objects.filter((o) => selects(target, o));
    if (selected.length === 0) throw new Error(`${where}: its target selects no object`);
    for (const object of selected) applyJson6902(object, parsed[0] as Json6902Operation[], where);
    return;
  }
  for (const patch of parsed as K8sObject[]) {
    const matches = target
      ? objects.filter((o) => selects(target, o))
      : objects.filter((o) => o.kind === patch.kind && o.metadata.name === patch.metadata?.name && group(o.apiVersion) === group(patch.apiVersion));
    if (matches.length === 0) throw new Error(`${where}: patches ${patch.kind} ${patch.metadata?.name}, which the resources do not have`);
    for (const object of matches) {
      if ((patch as Record<string, unknown>).$patch === 'delete') objects.splice(objects.indexOf(object), 1);
      else strategicMerge(object, { ...patch, metadata: { ...patch.metadata, name: object.metadata.name } });
    }
  }
}

function selects(target: PatchTarget, object: K8sObject): boolean {
  if (target.kind && target.kind !== object.kind) return false;
  if (target.name && target.name !== object.metadata.name) return false;
  return target.labelSelector === undefined || labelSelectorMatches(target.labelSelector, object.metadata.labels ?? {});
}

/** A Kubernetes label selector of `k=v`, `k!=v`, `k in (a,b)` and `k notin (a,b)` terms. */
export function labelSelectorMatches(selector: string, labels: Record<string, string>): boolean {
  const terms = selector.match(/[^,(]+(?:\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const term = raw.trim();
    const set = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (set) {
      const values = (set[3] ?? '').split(',').map((v) => v.trim());
      const has = values.includes(labels[set[1] ?? ''] ?? '\0');
      return set[2] === 'in' ? has : !has;
    }
    const equality = /^([\w./-]+)\s*(!=|==|=)\s*([\w./-]*)$/.exec(term);
    if (!equality) throw new Error(`label selector term ${term} is not implemented by the test renderer`);
    const equal = labels[equality[1] ?? ''] === equality[3];
    return equality[2] === '!=' ? !equal : equal;
  });
}

interface Json6902Operation {
  op: string;
  path: string;
  value?: unknown;
}

/** JSON 6902 add, replace and remove, with JSON pointers (`-`: the end of a list). */
function applyJson6902(object: K8sObject, operations: Json6902Operation[], where: string): void {
  for (const { op, path, value } of operations) {
    const keys = path
      .split('/')
      .slice(1)
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop();
    let parent: unknown = object;
    for (const key of keys) parent = isMap(parent) ? parent[key] : Array.isArray(parent) ? parent[Number(key)] : undefined;
    if (last === undefined || parent === undefined || parent === null)
      throw new Error(`${where}: ${op} ${path} on ${object.kind} ${object.metadata.name}: no such path`);
    if (!['add', 'replace', 'remove'].includes(op)) throw new Error(`${where}: JSON 6902 ${op} is not implemented by the test renderer`);
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (op === 'add') parent.splice(index, 0, structuredClone(value));
      else if (op === 'replace') parent[index] = structuredClone(value);
      else parent.splice(index, 1);
    } else if (isMap(parent)) {
      if (op === 'remove') delete parent[last];
      else parent[last] = structuredClone(value);
    }
  }
}

/** A kustomize env file: KEY=VALUE lines, `#` comments and blank lines skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const at = trimmed.indexOf('=');
    if (at <= 0) throw new Error(`env file line without KEY=VALUE: ${trimmed}`);
    env[trimmed.slice(0, at)] = trimmed.slice(at + 1);
  }
  return env;
}

const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string; optional?: boolean } };
  }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean };
}

export interface Probe {
  httpGet?: { path?: string; port: number | string };
  tcpSocket?: { port: number | string };
}

export interface PodSpec {
  containers: Container[];
  volumes?: Array<{
    name: string;
    configMap?: { name: string };
    secret?: { secretName: string };
    projected?: { sources: Array<{ configMap?: { name: string }; secret?: { name: string } }> };
  }>;
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  terminationGracePeriodSeconds?: number;
  restartPolicy?: string;
}

/** The pod template of a workload, if it has one. */
export function podOf(object: K8sObject): { labels: Record<string, string>; annotations: Record<string, string>; spec: PodSpec } | undefined {
  const template = (
    object.spec as { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: PodSpec } } | undefined
  )?.template;
  return template?.spec ? { labels: template.metadata?.labels ?? {}, annotations: template.metadata?.annotations ?? {}, spec: template.spec } : undefined;
}

export function containersOf(object: K8sObject): Container[] {
  const pod = podOf(object);
  return pod ? [...pod.spec.containers, ...(pod.spec.initContainers ?? [])] : [];
}

/** `registry/name:tag` -> `registry/name` (a registry port is not a tag). */
export function imageName(image: string): string {
  return image.replace(/@.*$/, '').replace(/:[^:/]+$/, '');
}

function imageTag(image: string): string {
  return image.slice(imageName(image).length);
}

/**
 * Strategic merge as kustomize applies it to these manifests: maps merge, a list of named objects
 * (containers, env, volumes, ports) merges by name (new items first), any other list is replaced,
 * null deletes.
 */
export function strategicMerge(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new Error(`patch directive ${key} is not implemented by the test renderer`);
    const current = target[key];
    if (value === null) delete target[key];
    else if (isMap(value) && isMap(current)) strategicMerge(current, value);
    else if (Array.isArray(value) && Array.isArray(current) && value.every((v) => isMap(v) && typeof v.name === 'string')) {
      const added: unknown[] = [];
      for (const item of value as Array<Record<string, unknown>>) {
        const existing = current.find((c) => isMap(c) && c.name === item.name) as Record<string, unknown> | undefined;
        if (existing) strategicMerge(existing, item);
        else added.push(structuredClone(item));
      }
      // kustomize puts the items a patch adds before the list's own.
      current.unshift(...added);
    } else target[key] = structuredClone(value);
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
