// The import-cycle check of `npm test` (turbo's root task `//#cycles`): every package's TypeScript
// source, generated Prisma clients left out (their cycles are Prisma's).
import { readdirSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Cycles allowed for now, as madge prints them (files joined by " > "), each with the change that removes it. */
const KNOWN_CYCLES = new Map([]);

const packageDirs = ['packages', 'services'].flatMap((group) => readdirSync(join(ROOT, group)).map((name) => join(group, name)));
const sources = [...packageDirs, 'gateway', 'apps/console/console', 'apps/console/docs', 'bench', 'drills', 'e2e', 'security', 'infra']
  .map((dir) => join(ROOT, dir, 'src'))
  .filter((dir) => existsSync(dir));

const result = await madge(sources, {
  baseDir: ROOT,
  fileExtensions: ['ts'],
  excludeRegExp: [/\/generated\//, /\.d\.ts$/],
  tsConfig: join(ROOT, 'tsconfig.base.json'),
});
const cycles = result.circular().map((files) => files.map((file) => relative(ROOT, join(ROOT, file))).join(' > '));
const unknown = cycles.filter((cycle) => !KNOWN_CYCLES.has(cycle));
for (const cycle of cycles) if (KNOWN_CYCLES.has(cycle)) console.log(`known import cycle (${KNOWN_CYCLES.get(cycle)}): ${cycle}`);
const stale = [...KNOWN_CYCLES.keys()].filter((cycle) => !cycles.includes(cycle));
for (const cycle of stale) console.log(`known import cycle no longer found: drop it from scripts/check-cycles.mjs: ${cycle}`);
if (unknown.length > 0) {
  console.error(`import cycles:\n${unknown.map((cycle) => `  ${cycle}`).join('\n')}`);
  process.exit(1);
}
console.log(`no other import cycles in ${Object.keys(result.obj()).length} files`);
