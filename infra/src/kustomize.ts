import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from './deployables';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: Array<{ name: string; newName?: string; newTag?: string; digest?: string }>;
  replicas?: Array<{ name: string; count: number }>;
  patches?: Array<{ path?: string; patch?: string; target?: unknown }>;
  secretGenerator?: Array<{
    name: string;
    envs?: string[];
    literals?: string[];
    files?: string[];
    type?: string;
    options?: { labels?: Record<string, string> };
  }>;
}

/** The kustomization fields this renderer implements; any other one fails loudly instead of being ignored. */
const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'replicas', 'patches', 'secretGenerator']);

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
  /** The file a secretGenerator reads instead of `envs` entries that are absent (the git-ignored secrets.env). */
  envFileFallback?: (path: string) => string | undefined;
}

/**
 * `kustomize build` for the subset of kustomize these manifests use: resources (files and
 * directories), namespace, images, replicas, strategic-merge patches from files, secretGenerator
 * from env files. Generated names keep no hash suffix. The tests compare it with `kubectl kustomize`
 * where kubectl is installed.
 */
export function renderKustomization(dir: string, options: RenderOptions = {}): K8sObject[] {
  const k = readKustomization(dir);
  const where = relative(ROOT, join(dir, 'kustomization.yaml'));
  for (const field of Object.keys(k)) {
    if (!SUPPORTED.has(field)) throw new Error(`${where}: ${field} is not implemented by the test renderer (src/kustomize.ts)`);
  }
  const objects: K8sObject[] = [];
  for (const resource of k.resources ?? []) {
    const path = resolve(dir, resource);
    if (!existsSync(path)) throw new Error(`${where}: resource ${resource} does not exist`);
    objects.push(...(statSync(path).isDirectory() ? renderKustomization(path, options) : readDocuments(path)));
  }

  for (const generator of k.secretGenerator ?? []) {
    if (generator.literals || generator.files) throw new Error(`${where}: secretGenerator ${generator.name}: only envs are implemented`);
    const data: Record<string, string> = {};
    for (const env of generator.envs ?? []) {
      let file = resolve(dir, env);
      if (!existsSync(file)) file = options.envFileFallback?.(file) ?? file;
      if (!existsSync(file)) throw new Error(`${where}: secretGenerator ${generator.name}: ${env} does not exist`);
      for (const [name, value] of Object.entries(parseEnvFile(readFileSync(file, 'utf8')))) data[name] = Buffer.from(value).toString('base64');
    }
    const metadata: K8sObject['metadata'] = { name: generator.name };
    if (generator.options?.labels) metadata.labels = { ...generator.options.labels };
    objects.push({ apiVersion: 'v1', kind: 'Secret', metadata, type: generator.type ?? 'Opaque', data });
  }

  for (const entry of k.patches ?? []) {
    if (!entry.path || entry.patch || entry.target) throw new Error(`${where}: only patches from a file without target are implemented`);
    const file = resolve(dir, entry.path);
    if (!existsSync(file)) throw new Error(`${where}: patch ${entry.path} does not exist`);
    for (const patch of readDocuments(file)) {
      const target = objects.find((o) => o.kind === patch.kind && o.metadata.name === patch.metadata?.name && group(o.apiVersion) === group(patch.apiVersion));
      if (!target) throw new Error(`${relative(ROOT, file)}: patches ${patch.kind} ${patch.metadata?.name}, which the resources do not have`);
      strategicMerge(target, patch);
    }
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
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } } }>;
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
}

export interface PodSpec {
  containers: Container[];
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
 * (containers, env, volumes, ports) merges by name, any other list is replaced, null deletes.
 */
export function strategicMerge(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new Error(`patch directive ${key} is not implemented by the test renderer`);
    const current = target[key];
    if (value === null) delete target[key];
    else if (isMap(value) && isMap(current)) strategicMerge(current, value);
    else if (Array.isArray(value) && Array.isArray(current) && value.every((v) => isMap(v) && typeof v.name === 'string')) {
      for (const item of value as Array<Record<string, unknown>>) {
        const existing = current.find((c) => isMap(c) && c.name === item.name) as Record<string, unknown> | undefined;
        if (existing) strategicMerge(existing, item);
        else current.push(structuredClone(item));
      }
    } else target[key] = structuredClone(value);
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
