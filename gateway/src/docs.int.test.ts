import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import http from 'node:http';
import { adminApiDocument } from '@platform/admin-api';
import { openApiDocument, type OpenApiDocument, type ServiceName } from '@platform/core';
import { DOCS_CSP } from './docs.handler';
import { closeServer, DEAD_URL, httpClient, listen, startGateway, type HttpClient, type Reply, type TestGateway } from './test/gateway';

/** A stand-in service that answers only its unsigned GET /openapi.json, as services do, and counts the calls. */
async function startDocumentUpstream(
  service: ServiceName,
): Promise<{ url: string; document: OpenApiDocument; calls: () => number; close: () => Promise<void> }> {
  const document = openApiDocument({ service, title: `${service} API`, version: '1', routes: {} });
  let calls = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/openapi.json') {
      res.writeHead(401).end();
      return;
    }
    calls += 1;
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(document));
  });
  const url = await listen(server);
  return { url, document, calls: () => calls, close: () => closeServer(server) };
}

let gw: TestGateway;
let client: HttpClient;
let events: Awaited<ReturnType<typeof startDocumentUpstream>>;
let warehouse: Awaited<ReturnType<typeof startDocumentUpstream>>;

beforeAll(async () => {
  events = await startDocumentUpstream('events');
  warehouse = await startDocumentUpstream('warehouse');
  // The pipelines service is down.
  gw = await startGateway({ upstreams: { events: events.url, warehouse: warehouse.url, pipelines: DEAD_URL } });
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await gw.close();
  await events.close();
  await warehouse.close();
});

const get = (path: string, headers?: Record<string, string>) => client.call(gw.url, 'GET', path, { headers });

function expectSecurityHeaders(res: Reply): void {
  expect(res.headers['content-security-policy']).toBe(DOCS_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
}

describe('GET /docs', () => {
  test('serves the reference page with a strict CSP: only this origin, no inline code, Trusted Types', async () => {
    for (const path of ['/docs', '/docs/', '/docs/index.html']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expectSecurityHeaders(res);
      expect(res.text).toContain('<script type="module" src="/docs/docs.js"></script>');
    }
    expect(DOCS_CSP).toContain("default-src 'none'");
    expect(DOCS_CSP).toContain("require-trusted-types-for 'script'");
    expect(DOCS_CSP).not.toMatch(/unsafe-|https?:|\*|data:|blob:/);
  });

  test('the page and its assets work offline: no URL of another origin anywhere', async () => {
    const assets = [
      ['/docs', 'text/html; charset=utf-8'],
      ['/docs/docs.js', 'text/javascript; charset=utf-8'],
      ['/docs/base.css', 'text/css; charset=utf-8'],
      ['/docs/docs.css', 'text/css; charset=utf-8'],
    ] as const;
    for (const [path, contentType] of assets) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(contentType);
      expectSecurityHeaders(res);
      expect(res.text).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
      // Unchanged files are revalidated, not downloaded again.
      expect((await get(path, { 'if-none-match': res.headers.etag as string })).status).toBe(304);
    }
  });

  test('serves every module the page script imports (ES modules, no bundler), none writing HTML from strings', async () => {
    const served = new Set<string>();
    const queue = ['/docs/docs.js'];
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      if (served.has(path)) continue;
      served.add(path);
      const res = await get(path);
      expect({ path, status: res.status, type: res.headers['content-type'] }).toEqual({ path, status: 200, type: 'text/javascript; charset=utf-8' });
      expect({ path, sinks: res.text.match(/\.(innerHTML|outerHTML|insertAdjacentHTML)\b|document\.write|\beval\(|new Function\(/g) ?? [] }).toEqual({
        path,
        sinks: [],
      });
      // Statements only: the samples' text holds `import … from '@platform/client'` inside a string.
      for (const [, specifier] of res.text.matchAll(/^\s*(?:import|export)\b[^;'"`]*\bfrom\s+['"]([^'"]+)['"]/gm)) {
        expect(specifier).toMatch(/^\.\/[\w.-]+\.js$/);
        queue.push(`/docs/${specifier!.slice(2)}`);
      }
    }
    expect([...served].sort()).toEqual(
      expect.arrayContaining(['/docs/docs.js', '/docs/dom.js', '/docs/markdown.js', '/docs/samples.js', '/docs/schema.view.js']),
    );
  });

  test('lists the three services and the admin API with their gateway prefix and document', async () => {
    const res = await get('/docs/services.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      services: [
        { name: 'events', prefix: '/events/v0', document: '/docs/events.json' },
        { name: 'warehouse', prefix: '/warehouse/v1', document: '/docs/warehouse.json' },
        { name: 'pipelines', prefix: '/pipelines/v3', document: '/docs/pipelines.json' },
        { name: 'admin', prefix: '/admin/v1', document: '/docs/admin.json' },
      ],
    });
  });
});

describe('GET /docs/{service}.json', () => {
  test("serves each service's own document, without a token", async () => {
    for (const upstream of [events, warehouse]) {
      const name = upstream === events ? 'events' : 'warehouse';
      const res = await get(`/docs/${name}.json`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(JSON.parse(JSON.stringify(upstream.document)));
    }
  });

  test('keeps a document briefly instead of asking the service on every request', async () => {
    await get('/docs/events.json');
    const before = events.calls();
    await Promise.all([get('/docs/events.json'), get('/docs/events.json'), get('/docs/events.json')]);
    expect(events.calls()).toBe(before);
  });

  test('a service that is down is unavailable (503) while the page and the other documents still work', async () => {
    const res = await get('/docs/pipelines.json');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('temporarily_unavailable');
    expect(res.headers['retry-after']).toBe('1');
    expect((await get('/docs')).status).toBe(200);
    expect((await get('/docs/events.json')).status).toBe(200);
  });

  test('anything else under /docs is 404; only GET and HEAD are allowed', async () => {
    for (const path of ['/docs/gateway.json', '/docs/admin', '/docs/admin.json/', '/docs/Admin.json']) expect((await get(path)).status).toBe(404);
    const post = await client.call(gw.url, 'POST', '/docs', { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('GET /docs/admin.json', () => {
  test("serves the admin API's document, built from the gateway's own declarations, without a token and like the services' documents", async () => {
    const res = await get('/docs/admin.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expectSecurityHeaders(res);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(adminApiDocument())));
    expect(res.body.servers).toEqual([expect.objectContaining({ url: '/admin/v1' })]);
    expect(res.body.paths['/workspaces'].post.security).toEqual([{ adminToken: [] }]);
    expect((await get('/docs/admin.json', { 'if-none-match': res.headers.etag as string })).status).toBe(304);
    const head = await client.call(gw.url, 'HEAD', '/docs/admin.json');
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBe(res.headers.etag);
  });

  test('is gzipped for a client that accepts gzip (JSON of 1 KiB or more)', async () => {
    const zipped = await request(`${gw.url}/docs/admin.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(JSON.parse(gunzipSync(Buffer.from(await zipped.body.arrayBuffer())).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(adminApiDocument())));
  });
});

describe('the services’ documents are compressed (contract section 2: JSON of 1 KiB or more, gzip when accepted)', () => {
  test('/docs/events.json is gzipped for a client that accepts gzip and whole for one that does not', async () => {
    const zipped = await request(`${gw.url}/docs/events.json`, { headers: { 'accept-encoding': 'gzip' } });
    const bytes = Buffer.from(await zipped.body.arrayBuffer());
    expect(zipped.statusCode).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    const document = JSON.parse(gunzipSync(bytes).toString('utf8')) as { openapi: string };
    expect(document.openapi).toMatch(/^3\./);

    const plain = await get('/docs/events.json', { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.text)).toEqual(document);
    expect(bytes.length).toBeLessThan(Buffer.byteLength(plain.text) / 4);
  });
});
