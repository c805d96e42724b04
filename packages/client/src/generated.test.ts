import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGE_DIR = join(__dirname, '..');

test('the committed types are those the OpenAPI documents generate now (run `pnpm --filter @platform/client build` after changing a route)', () => {
  // In a child process: openapi-typescript is ES modules, which jest's module system does not load.
  const printed = execFileSync(process.execPath, [join(PACKAGE_DIR, 'scripts', 'generate-types.cjs'), '--print'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const generated = JSON.parse(printed) as Record<string, string>;
  expect(Object.keys(generated).sort()).toEqual(['admin', 'events', 'pipelines', 'warehouse']);
  for (const [name, text] of Object.entries(generated)) {
    const file = `src/generated/${name}.ts`;
    expect({ file, upToDate: readFileSync(join(PACKAGE_DIR, file), 'utf8') === text }).toEqual({ file, upToDate: true });
  }
}, 60_000);
