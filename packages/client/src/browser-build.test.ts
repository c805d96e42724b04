import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const BROWSER_DIR = join(__dirname, '..', 'dist', 'browser');

test('dist/browser is ES modules a page can import as they are: every import relative and present, nothing from node:', () => {
  const files = readdirSync(BROWSER_DIR).filter((file) => file.endsWith('.js'));
  expect(files).toEqual(expect.arrayContaining(['index.js', 'client.js', 'openapi-fetch.js']));
  for (const file of files) {
    const source = readFileSync(join(BROWSER_DIR, file), 'utf8');
    for (const [, specifier] of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/g)) {
      expect({ file, specifier, relative: specifier!.startsWith('./') }).toEqual({ file, specifier, relative: true });
      expect({ file, specifier, exists: existsSync(join(BROWSER_DIR, specifier!)) }).toEqual({ file, specifier, exists: true });
    }
  }
  // Loaded as ES modules, the entry exports the client.
  const exported = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', `import(${JSON.stringify(join(BROWSER_DIR, 'index.js'))}).then((m) => console.log(Object.keys(m).sort().join(',')))`],
    {
      encoding: 'utf8',
    },
  );
  expect(exported.trim().split(',')).toEqual(expect.arrayContaining(['createClient', 'createAdminClient', 'paginate', 'unwrap', 'PlatformApiError']));
});
