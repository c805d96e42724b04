import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { BUCKET_LIMITS, EVENT_TYPES, ROUTES, SCOPES } from '@platform/core';
import { MAX_KEY_RATE_LIMIT } from '@platform/admin-api';
import { CONSOLE_PATH, consoleMeta, defaultConsoleDir, loadConsoleAssets, type ConsoleAssets } from './console.assets';

// These tests read the built console (@platform/console's dist/console): turbo builds it, a dependency, before the gateway tests.
/** The @platform/console package's folder: the sources the built page comes from. */
const CONSOLE_APP = dirname(require.resolve('@platform/console/package.json'));
const dir = defaultConsoleDir();
let assets: ConsoleAssets;

beforeAll(() => {
  if (!dir) throw new Error('the console is not built: pnpm turbo run build --filter=@platform/console');
  assets = loadConsoleAssets(dir);
});

const text = (path: string): string => assets.get(path)!.body.toString('utf8');
const files = (): string[] => [...assets.keys()].filter((path) => path.startsWith(`${CONSOLE_PATH}/`) && path !== `${CONSOLE_PATH}/`);

/** The files the build copies unchanged from npm packages (pages/build-pages.mjs), by the path they are served at. */
const PACKAGE_FILES: Record<string, string> = {
  '/console/uPlot.esm.js': 'uplot/dist/uPlot.esm.js',
  '/console/uPlot.min.css': 'uplot/dist/uPlot.min.css',
};
/** The platform's client built for browsers (packages/client/dist/browser), served as /console/client/. */
const CLIENT_PATH = `${CONSOLE_PATH}/client/`;
const clientDir = dirname(require.resolve('@platform/client/browser'));
/** Its modules by the path they are served at. */
const clientModules = (): Record<string, string> =>
  Object.fromEntries(
    readdirSync(clientDir, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.js'))
      .map((file) => [`${CLIENT_PATH}${file.split(sep).join('/')}`, join(clientDir, file)]),
  );
const fromPackage = (path: string): boolean => path in PACKAGE_FILES || path.startsWith(CLIENT_PATH);

describe('console assets', () => {
  test('the page, its style sheet, its entry module and every module it imports are built', () => {
    for (const path of [
      '/console',
      '/console/',
      '/console/index.html',
      '/console/base.css',
      '/console/console.css',
      '/console/main.js',
      '/console/meta.json',
      '/console/client/index.js',
      '/console/client/openapi-fetch.js',
      ...Object.keys(PACKAGE_FILES),
    ]) {
      expect(assets.has(path)).toBe(true);
    }
    expect(assets.get('/console')).toBe(assets.get('/console/index.html'));
  });

  test('the chart library is served as published: its ES module and style sheet are the npm package’s files, byte for byte', () => {
    for (const [path, file] of Object.entries(PACKAGE_FILES)) {
      expect({ path, same: assets.get(path)!.body.equals(readFileSync(require.resolve(file))) }).toEqual({ path, same: true });
    }
  });

  test('the platform client is served as its browser build: every module of packages/client/dist/browser byte for byte, nothing else', () => {
    const modules = clientModules();
    expect(Object.keys(modules)).toContain('/console/client/index.js');
    expect(
      files()
        .filter((path) => path.startsWith(CLIENT_PATH))
        .sort(),
    ).toEqual(Object.keys(modules).sort());
    for (const [path, file] of Object.entries(modules)) {
      expect({ path, same: assets.get(path)!.body.equals(readFileSync(file)) }).toEqual({ path, same: true });
    }
  });

  test('no asset references another origin: no URL with a scheme or protocol-relative URL (an SVG namespace name is not fetched)', () => {
    for (const path of files()) {
      // A published library keeps its comments (credits, sources of its algorithms): a URL there is never fetched.
      const code = fromPackage(path) ? text(path).replace(/^\s*(\/\/|\/?\*).*$/gm, '') : text(path);
      const body = code.replaceAll('xmlns="http://www.w3.org/2000/svg"', '');
      expect({ path, urls: body.match(/[a-z][a-z0-9+.-]*:\/\/[^\s"'`)]*/gi) ?? [] }).toEqual({ path, urls: [] });
      expect({ path, protocolRelative: body.match(/(?:src|href|action)\s*=\s*["']\/\/|url\(\s*["']?\/\//gi) ?? [] }).toEqual({ path, protocolRelative: [] });
    }
  });

  test('the page has no inline script, inline style or event-handler attribute (the CSP would block them)', () => {
    const html = text('/console');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/console\/[\w.-]+\.js"/);
      expect(attributes).toMatch(/\btype="module"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style\b/i);
    expect(html).not.toMatch(/\sstyle\s*=/i);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    for (const [, url] of html.matchAll(/\b(?:src|href)="([^"]*)"/g)) expect(url).toMatch(/^(\/console\/[\w.-]+|#[\w-]+)$/);
    for (const [, url] of html.matchAll(/\b(?:src|href)="(\/console\/[^"]*)"/g)) expect(assets.has(url!)).toBe(true);
  });

  test('the modules run without a bundler: every import (static or dynamic) is a relative path to a built module of the page', () => {
    let imports = 0;
    for (const path of files().filter((p) => p.endsWith('.js'))) {
      for (const [, staticImport, dynamicImport] of text(path).matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]?([^'")]+)['"]?\s*\)/g)) {
        const specifier = staticImport ?? dynamicImport!;
        expect({ path, specifier }).toEqual({ path, specifier: expect.stringMatching(/^\.{1,2}\/[\w./-]+\.js$/) });
        const target = new URL(specifier, `https://gateway.test${path}`).pathname;
        expect({ path, specifier, target, served: target.startsWith(`${CONSOLE_PATH}/`) && assets.has(target) }).toEqual({
          path,
          specifier,
          target,
          served: true,
        });
        imports++;
      }
    }
    // The console's modules import each other and the client's; the client's import openapi-fetch.
    expect(imports).toBeGreaterThan(20);
    expect(text('/console/api.js')).toMatch(/from '\.\/client\/index\.js'/);
  });

  test('the console never writes HTML from strings or keeps the token anywhere but in memory', () => {
    for (const path of files().filter((p) => p.endsWith('.js'))) {
      const source = text(path);
      expect({ path, sinks: source.match(/\.(innerHTML|outerHTML|insertAdjacentHTML)\b|document\.write|\beval\(|new Function\(/g) ?? [] }).toEqual({
        path,
        sinks: [],
      });
      expect({ path, storage: source.match(/localStorage|sessionStorage|document\.cookie|indexedDB/g) ?? [] }).toEqual({ path, storage: [] });
    }
  });

  test("the page is the gateway pages' shared shell around console/body.html, with the shared base style sheet", () => {
    const page = text('/console/index.html');
    expect(page).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(page).toContain('<title>Workspace console · Platform</title>');
    expect(page).toMatch(
      /<link rel="stylesheet" href="\/console\/base.css" \/>\s*<link rel="stylesheet" href="\/console\/uPlot.min.css" \/>\s*<link rel="stylesheet" href="\/console\/console.css" \/>/,
    );
    expect(page).toContain(
      `<a class="skip-link" href="#main">Skip to content</a>\n    ${readFileSync(join(CONSOLE_APP, 'console', 'body.html'), 'utf8')}\n  </body>`,
    );
    expect(text('/console/base.css')).toBe(readFileSync(join(CONSOLE_APP, 'pages', 'base.css'), 'utf8'));
    expect(text('/console/console.css')).toBe(readFileSync(join(CONSOLE_APP, 'console', 'static', 'console.css'), 'utf8'));
  });
});

describe('console meta (from @platform/core, never copied into the page)', () => {
  test('lists every contract scope in order, the rate limit buckets with their platform limits, the service prefixes and whether the gateway routes webhook endpoints', () => {
    const meta = JSON.parse(text('/console/meta.json'));
    expect(meta).toEqual(consoleMeta());
    expect(meta.scopes).toEqual([...SCOPES]);
    expect(meta.version).toBe('2024-12-01');
    expect(meta.rate_limit_buckets).toEqual(Object.entries(BUCKET_LIMITS).map(([name, limit]) => ({ name, limit })));
    expect(meta.rate_limit_buckets[0]).toEqual({ name: 'events', limit: 400 });
    expect(meta.rate_limit_max).toBe(MAX_KEY_RATE_LIMIT);
    expect(meta.services.map((s: { name: string; prefix: string }) => [s.name, s.prefix])).toEqual([
      ['events', '/events/v0'],
      ['warehouse', '/warehouse/v1'],
      ['pipelines', '/pipelines/v3'],
    ]);
    for (const service of meta.services) {
      expect(service.webhooks).toBe('GET /webhook-endpoints' in ROUTES[service.name as keyof typeof ROUTES]);
    }
  });

  test('each service offers the event types it emits: tickets from events, items and reservations from warehouse, runs from pipelines', () => {
    const byService = Object.fromEntries(consoleMeta().services.map((s) => [s.name, s.event_types]));
    expect(byService.events).toEqual(['ticket.validated', 'ticket.unvalidated']);
    expect(byService.warehouse!.every((type) => type.startsWith('item.') || type.startsWith('reservation.'))).toBe(true);
    expect(byService.pipelines!.every((type) => type.startsWith('run.'))).toBe(true);
    expect([...byService.events!, ...byService.warehouse!, ...byService.pipelines!].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
