// Makes dist/browser/ loadable as it is by a browser: tsc wrote the main entry there as ES modules,
// which import the bare name 'openapi-fetch'; this copies openapi-fetch's ES module beside them
// (it imports nothing itself) and points the imports at it. The console serves this folder.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'browser');
const require = createRequire(import.meta.url);
const vendored = readFileSync(require.resolve('openapi-fetch/dist/index.mjs'), 'utf8');
if (/^\s*import\s/m.test(vendored)) throw new Error('openapi-fetch now imports other modules: dist/browser would need them too');
copyFileSync(require.resolve('openapi-fetch/dist/index.mjs'), join(out, 'openapi-fetch.js'));
// @platform/contract's browser modules (they import nothing outside their folder) go beside them as contract/.
const contract = join(dirname(require.resolve('@platform/contract/package.json')), 'dist', 'browser');
mkdirSync(join(out, 'contract'), { recursive: true });
for (const file of readdirSync(contract).filter((f) => f.endsWith('.js'))) copyFileSync(join(contract, file), join(out, 'contract', file));
for (const file of readdirSync(out)) {
  if (!file.endsWith('.js') || file === 'openapi-fetch.js') continue;
  const source = readFileSync(join(out, file), 'utf8');
  writeFileSync(
    join(out, file),
    source.replace(/from 'openapi-fetch';/g, "from './openapi-fetch.js';").replace(/from '@platform\/contract';/g, "from './contract/index.js';"),
  );
}
// Node (and tools) read the folder as ES modules too.
writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
