import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Deployable } from './deployables';

/** A file of a deployable's source tree. */
export interface SourceFile {
  /** Relative to the repository root. */
  path: string;
  text: string;
}

/** The files that may use the generated Prisma client: the stores, and database.ts that builds the client. */
export function mayUsePrismaClient(path: string): boolean {
  const name = basename(path);
  return name.endsWith('.store.ts') || name === 'database.ts';
}

/** Tests, and their set-up under `src/test/`: they build the app with its stores and read rows to check what a request wrote. */
export function isTestCode(path: string): boolean {
  return path.endsWith('.test.ts') || /(^|\/)src\/test\//.test(path);
}

/**
 * The files that may hold a deployable's client (`Database`): those that may use the generated
 * client, the processes' entry points (they build the client, then the stores over it), and test code.
 * App factories, routes, handlers and services get stores.
 */
export function mayHoldDatabase(path: string, entryPoints: ReadonlySet<string>): boolean {
  return mayUsePrismaClient(path) || entryPoints.has(path) || isTestCode(path);
}

/**
 * The files that may hold a PostgreSQL pool (import `pg`, types included): those that may hold the
 * client, and connectors (`src/connectors/`), which connect to what a config names. App factories,
 * routes, handlers and services get a store that holds the pool.
 */
export function mayHoldPool(path: string, entryPoints: ReadonlySet<string>): boolean {
  return mayHoldDatabase(path, entryPoints) || /(^|\/)src\/connectors\//.test(path);
}

/**
 * The source files of the processes' entry points: each deployable's `entry` (dist/x.js from
 * src/x.ts) and its package's `bin` scripts: dist/x.js, or a committed launcher bin/x.cjs that runs
 * dist/x.js (it exists before the build, so pnpm links it on a fresh clone).
 */
export function entryPoints(root: string, deployables: readonly Deployable[]): Set<string> {
  const source = (dir: string, script: string) => join(dir, script.replace(/^(\.\/)?(dist\/(.+)\.js|bin\/(.+)\.cjs)$/, 'src/$3$4.ts'));
  const bins = [...new Set(deployables.map((d) => d.dir))].flatMap((dir) => {
    const { bin } = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
    const scripts = typeof bin === 'string' ? [bin] : Object.values(bin ?? {});
    return scripts.map((script) => source(dir, script));
  });
  return new Set([...deployables.map((d) => source(d.dir, d.entry)), ...bins]);
}

// Static imports and re-exports (`import ... from`, `export ... from`), then `import(...)` and `require(...)`.
const FROM = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+['"]([^'"]+)['"]/gm;
const CALL = /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
const GENERATED_CLIENT = /(^|\/)generated\/prisma(\/|$)/;
// A type that is the client or holds it: PrismaClient itself, or the Prisma namespace (Prisma.TransactionClient).
const CLIENT_TYPE = /\b(PrismaClient|Prisma)\b|\*\s+as\b/;

/** The module that builds a deployable's client: `src/database.ts`, by any relative path. */
export const DATABASE_MODULE = /^\.{1,2}\/(.*\/)?database(\.js)?$/;
/** The PostgreSQL driver, whose pools reach a database without Prisma. */
export const DRIVER_MODULE = /^pg$/;
/** @platform/webhooks' raw-SQL surface, which a service's client is handed to the webhooks runtime as. */
export const SQL_MODULE = /^\.{1,2}\/(.*\/)?sql(\.js)?$/;

/** Every statement or call of a file that imports a module whose specifier matches `module`, with whether it imports types only. */
function importsOf(file: SourceFile, module: RegExp): { statement: string; typeOnly: boolean; names: string }[] {
  const found: { statement: string; typeOnly: boolean; names: string }[] = [];
  for (const [statement, , typeOnly, names, specifier] of file.text.matchAll(FROM)) {
    if (module.test(specifier!)) found.push({ statement: `${file.path}: ${statement.trim()}`, typeOnly: typeOnly !== undefined, names: names! });
  }
  for (const [call, specifier] of file.text.matchAll(CALL)) {
    if (module.test(specifier!)) found.push({ statement: `${file.path}: ${call}`, typeOnly: false, names: '' });
  }
  return found;
}

/**
 * Where a file outside the stores reaches the generated Prisma client (`src/generated/prisma`): only
 * stores hold the client, so only they can query, and every query of theirs takes the workspace.
 * Row types for render functions (`import type`) are allowed anywhere: a type cannot query. The
 * client's own types (PrismaClient, a transaction's Prisma.TransactionClient) are not: a file
 * typed with them is handed the client.
 */
export function prismaClientImports(file: SourceFile): string[] {
  if (mayUsePrismaClient(file.path)) return [];
  return importsOf(file, GENERATED_CLIENT)
    .filter((found) => !found.typeOnly || CLIENT_TYPE.test(found.names))
    .map((found) => found.statement);
}

/**
 * Where a file imports the module that gives out the client (`module`: DATABASE_MODULE in a
 * deployable, SQL_MODULE in @platform/webhooks), types included: a file that names `Database` is
 * handed the client. The caller picks the files that may not hold it.
 */
export function clientModuleImports(file: SourceFile, module: RegExp): string[] {
  return importsOf(file, module).map((found) => found.statement);
}

/** Every `.ts` file under `dir`, without the generated client itself. */
export function sourceFiles(root: string, dir: string): SourceFile[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' || name === 'node_modules' ? [] : sourceFiles(root, path);
    return name.endsWith('.ts') ? [{ path: relative(root, path), text: readFileSync(path, 'utf8') }] : [];
  });
}
