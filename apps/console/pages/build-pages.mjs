// Builds the pages the gateway serves (/console, /docs) into dist/: each page's static files (its style sheet and icon),
// the base style sheet they share, the files it takes from npm packages, and its index.html, the
// shared shell around the page's body. tsc has already put the page's scripts there, so dist/ is
// all the gateway needs to serve them.
import { copyFileSync, cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, '..');
const require = createRequire(import.meta.url);

/**
 * Each page: served at /{name}, its title, its style sheets after base.css and its entry script,
 * where "Skip to content" leads, the files it serves unchanged from npm packages (served name →
 * file in node_modules), so nothing is fetched from another origin, and the folders of ES modules
 * it serves unchanged from packages (served folder → a module in that folder; its .js files).
 */
const PAGES = [
  {
    name: 'console',
    title: 'Workspace console',
    // uPlot's sheet first, so console.css can adjust the usage charts.
    stylesheets: ['uPlot.min.css', 'console.css'],
    script: 'main.js',
    main: 'main',
    packageFiles: { 'uPlot.esm.js': 'uplot/dist/uPlot.esm.js', 'uPlot.min.css': 'uplot/dist/uPlot.min.css' },
    // The platform's client, built for browsers (packages/client/scripts/build-browser.mjs): the console's data calls.
    packageFolders: { client: '@platform/client/browser' },
  },
  { name: 'docs', title: 'API reference', stylesheets: ['docs.css'], script: 'docs.js', main: 'content', packageFiles: {}, packageFolders: {} },
];

const shell = readFileSync(join(here, 'shell.html'), 'utf8');

for (const page of PAGES) {
  const out = join(app, 'dist', page.name);
  cpSync(join(app, page.name, 'static'), out, { recursive: true });
  copyFileSync(join(here, 'base.css'), join(out, 'base.css'));
  for (const [served, file] of Object.entries(page.packageFiles)) copyFileSync(require.resolve(file), join(out, served));
  for (const [served, module] of Object.entries(page.packageFolders)) {
    const folder = join(out, served);
    rmSync(folder, { recursive: true, force: true });
    cpSync(dirname(require.resolve(module)), folder, { recursive: true, filter: (source) => statSync(source).isDirectory() || source.endsWith('.js') });
  }
  const values = {
    ...page,
    stylesheets: page.stylesheets.map((sheet) => `<link rel="stylesheet" href="/${page.name}/${sheet}" />`).join('\n    '),
    body: readFileSync(join(app, page.name, 'body.html'), 'utf8'),
  };
  writeFileSync(
    join(out, 'index.html'),
    shell.replace(/{{(\w+)}}/g, (_, key) => {
      if (!(key in values)) throw new Error(`pages/shell.html: no value for {{${key}}} in the ${page.name} page`);
      return values[key];
    }),
  );
}
