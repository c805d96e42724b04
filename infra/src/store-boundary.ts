import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

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

// Static imports and re-exports (`import ... from`, `export ... from`), then `import(...)` and `require(...)`.
const FROM = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+['"]([^'"]+)['"]/gm;
const CALL = /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
const GENERATED_CLIENT = /(^|\/)generated\/prisma(\/|$)/;

/**
 * Where a file outside the stores reaches the generated Prisma client (`src/generated/prisma`): only
 * stores hold the client, so only they can query, and every query of theirs takes the workspace.
 * Row types for render functions (`import type`) are allowed anywhere: a type cannot query.
 */
export function prismaClientImports(file: SourceFile): string[] {
  if (mayUsePrismaClient(file.path)) return [];
  const found: string[] = [];
  for (const [statement, , typeOnly, , specifier] of file.text.matchAll(FROM)) {
    if (GENERATED_CLIENT.test(specifier!) && !typeOnly) found.push(`${file.path}: ${statement.trim()}`);
  }
  for (const [call, specifier] of file.text.matchAll(CALL)) {
    if (GENERATED_CLIENT.test(specifier!)) found.push(`${file.path}: ${call}`);
  }
  return found;
}

/** Every `.ts` file under `dir`, without the generated client itself. */
export function sourceFiles(root: string, dir: string): SourceFile[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' || name === 'node_modules' ? [] : sourceFiles(root, path);
    return name.endsWith('.ts') ? [{ path: relative(root, path), text: readFileSync(path, 'utf8') }] : [];
  });
}
