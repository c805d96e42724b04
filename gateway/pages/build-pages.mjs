// Builds the gateway's own pages into dist/: each page's static files (its style sheet and icon),
// the base style sheet they share, and its index.html, the shared shell around the page's body.
// tsc has already put the page's scripts there, so dist/ alone is the deployable gateway.
import { copyFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const gateway = join(here, '..');

/** Each page: served at /{name}, its title, its own style sheet and entry script, and where "Skip to content" leads. */
const PAGES = [
  { name: 'console', title: 'Workspace console', stylesheet: 'console.css', script: 'main.js', main: 'main' },
  { name: 'docs', title: 'API reference', stylesheet: 'docs.css', script: 'docs.js', main: 'content' },
];

const shell = readFileSync(join(here, 'shell.html'), 'utf8');

for (const page of PAGES) {
  const out = join(gateway, 'dist', page.name);
  cpSync(join(gateway, page.name, 'static'), out, { recursive: true });
  copyFileSync(join(here, 'base.css'), join(out, 'base.css'));
  const values = { ...page, body: readFileSync(join(gateway, page.name, 'body.html'), 'utf8') };
  writeFileSync(
    join(out, 'index.html'),
    shell.replace(/{{(\w+)}}/g, (_, key) => {
      if (!(key in values)) throw new Error(`pages/shell.html: no value for {{${key}}} in the ${page.name} page`);
      return values[key];
    }),
  );
}
