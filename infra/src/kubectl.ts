import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { type K8sObject, type Kustomization, readKustomization } from './kustomize';

/**
 * The kubectl whose `kustomize` the tests compare the renderer with: `$KUBECTL`, else `kubectl` on
 * the PATH, if its embedded kustomize is 5 or later (components, patch targets with set-based label
 * selectors). Debian's kubernetes-client (kubectl 1.20, kustomize 2) is too old for these manifests.
 */
export function findKubectl(): string | undefined {
  const kubectl = process.env.KUBECTL ?? 'kubectl';
  const version = spawnSync(kubectl, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
  if (version.status !== 0) return undefined;
  const kustomize = (JSON.parse(version.stdout) as { kustomizeVersion?: string }).kustomizeVersion ?? '';
  const major = Number(/^v?(\d+)/.exec(kustomize)?.[1] ?? 0);
  return major >= 5 ? kubectl : undefined;
}

/** `kubectl kustomize dir`, parsed. Throws with kubectl's message when it refuses. */
export function kubectlKustomize(kubectl: string, dir: string): K8sObject[] {
  const result = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${result.stderr || result.error?.message}`);
  return parseAllDocuments(result.stdout).flatMap((doc) => {
    const value = doc.toJS() as K8sObject | null;
    return value ? [value] : [];
  });
}

/**
 * kustomize names a generated ConfigMap or Secret `<name>-<hash of its content>` and rewrites the
 * references to it; the test renderer keeps `<name>`. Maps kubectl's objects back to plain names
 * (and Secret values back to unwrapped base64).
 */
export function withoutNameHashes(objects: K8sObject[], plainNames: Set<string>): K8sObject[] {
  const renamed = new Map<string, string>();
  for (const o of objects) {
    const plain = /^(.+)-[a-z0-9]{10}$/.exec(o.metadata.name)?.[1];
    if ((o.kind === 'ConfigMap' || o.kind === 'Secret') && plain && plainNames.has(plain)) renamed.set(o.metadata.name, plain);
  }
  const rename = (value: unknown): unknown => {
    if (typeof value === 'string') return renamed.get(value) ?? value;
    if (Array.isArray(value)) return value.map(rename);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rename(v)]));
    return value;
  };
  return objects.map((o) => {
    const plain = rename(o) as K8sObject;
    // kustomize wraps long base64 values in lines; base64 ignores the breaks.
    if (plain.kind === 'Secret' && plain.data)
      plain.data = Object.fromEntries(Object.entries(plain.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]));
    return plain;
  });
}

/**
 * A scratch copy of infra/k8s in which every git-ignored generator input (`secrets.env`,
 * `pgbouncer-userlist.txt`) is its committed `.example`, so kubectl can render the overlays; `edit`
 * may rewrite kustomizations in it. `remove()` deletes it.
 */
export function scratchCopy(k8sDir: string, edit: (root: string) => void = () => undefined): { root: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'platform-k8s-'));
  cpSync(k8sDir, root, { recursive: true });
  const examples = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? examples(path) : name.endsWith('.example') ? [path] : [];
    });
  for (const example of examples(root)) {
    const real = example.slice(0, -'.example'.length);
    if (!existsSync(real)) cpSync(example, real);
  }
  edit(root);
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** Rewrites one kustomization.yaml of a scratch copy (comments are not kept). */
export function editKustomization(dir: string, change: (k: Kustomization) => void): void {
  const k = readKustomization(dir);
  change(k);
  writeFileSync(join(dir, 'kustomization.yaml'), stringify(k));
}
