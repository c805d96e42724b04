import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_TYPES, ROUTES, SCOPES } from '@platform/core';
import { CONSOLE_PATH, consoleMeta, defaultConsoleDir, loadConsoleAssets, type ConsoleAssets } from './console.assets';

// These tests read the built console (dist/console): turbo builds before it tests.
const dir = defaultConsoleDir();
let assets: ConsoleAssets;

beforeAll(() => {
  if (!dir) throw new Error('dist/console is missing: run the gateway build (pnpm turbo run build --filter=@platform/gateway)');
  assets = loadConsoleAssets(dir);
});

const text = (path: string): string => assets.get(path)!.body.toString('utf8');
const files = (): string[] => [...assets.keys()].filter((path) => path.startsWith(`${CONSOLE_PATH}/`) && path !== `${CONSOLE_PATH}/`);

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
    ]) {
      expect(assets.has(path)).toBe(true);
    }
    expect(assets.get('/console')).toBe(assets.get('/console/index.html'));
  });

  test('no asset references another origin: no URL with a scheme or protocol-relative URL (an SVG namespace name is not fetched)', () => {
    for (const path of files()) {
      const body = text(path).replaceAll('xmlns="http://www.w3.org/2000/svg"', '');
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

  test('the modules run without a bundler: every import is a relative path to a built module', () => {
    for (const path of files().filter((p) => p.endsWith('.js'))) {
      for (const [, specifier] of text(path).matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)) {
        expect(specifier).toMatch(/^\.\/[\w.-]+\.js$/);
        expect(assets.has(`${CONSOLE_PATH}/${specifier!.slice(2)}`)).toBe(true);
      }
    }
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
    expect(page).toMatch(/<link rel="stylesheet" href="\/console\/base.css" \/>\s*<link rel="stylesheet" href="\/console\/console.css" \/>/);
    expect(page).toContain(
      `<a class="skip-link" href="#main">Skip to content</a>\n    ${readFileSync(join(__dirname, '..', 'console', 'body.html'), 'utf8')}\n  </body>`,
    );
    expect(text('/console/base.css')).toBe(readFileSync(join(__dirname, '..', 'pages', 'base.css'), 'utf8'));
    expect(text('/console/console.css')).toBe(readFileSync(join(__dirname, '..', 'console', 'static', 'console.css'), 'utf8'));
  });
});

describe('console meta (from @platform/core, never copied into the page)', () => {
  test('lists every contract scope in order, the service prefixes and whether the gateway routes webhook endpoints', () => {
    const meta = JSON.parse(text('/console/meta.json'));
    expect(meta).toEqual(consoleMeta());
    expect(meta.scopes).toEqual([...SCOPES]);
    expect(meta.version).toBe('2024-12-01');
    expect(meta.services.map((s: { name: string; prefix: string }) => [s.name, s.prefix])).toEqual([
      ['events', '/events/v0'],
      ['warehouse', '/warehouse/v1'],
      ['pipelines', '/pipelines/v3'],
    ]);
    for (const service of meta.services) {
      expect(service.webhooks).toBe('GET /webhook-endpoints' in ROUTES[service.name as keyof typeof ROUTES]);
    }
  });

  test('each service offers the event types it emits: tickets from events, items from warehouse, runs from pipelines', () => {
    const byService = Object.fromEntries(consoleMeta().services.map((s) => [s.name, s.event_types]));
    expect(byService.events).toEqual(['ticket.validated', 'ticket.unvalidated']);
    expect(byService.warehouse!.every((type) => type.startsWith('item.'))).toBe(true);
    expect(byService.pipelines!.every((type) => type.startsWith('run.'))).toBe(true);
    expect([...byService.events!, ...byService.warehouse!, ...byService.pipelines!].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
