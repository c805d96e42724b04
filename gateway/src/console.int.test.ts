import { SCOPES } from '@platform/core';
import { CONSOLE_CSP } from './console.handler';
import { ADMIN_TOKEN, httpClient, startGateway, type HttpClient, type Reply, type TestGateway } from './test/gateway';

let gw: TestGateway;
let client: HttpClient;

beforeAll(async () => {
  gw = await startGateway();
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await gw.close();
});

const get = (path: string, headers?: Record<string, string>) => client.call(gw.url, 'GET', path, { headers });

function expectSecurityHeaders(res: Reply): void {
  expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  // Never a cookie, never an opening for another origin's scripts.
  expect(res.headers['set-cookie']).toBeUndefined();
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
}

describe('GET /console', () => {
  test('serves the page as HTML with a strict CSP, nosniff and revalidated caching', async () => {
    for (const path of ['/console', '/console/', '/console/index.html']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expectSecurityHeaders(res);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers.etag).toMatch(/^"[\w-]{27}"$/);
      expect(res.text).toContain('<script type="module" src="/console/main.js"></script>');
      expect(res.text).toContain('<label for="admin-token">Admin token</label>');
    }
  });

  test('the CSP allows only this origin and no inline code, framing or form submission', () => {
    const directives = Object.fromEntries(CONSOLE_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toMatchObject({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
      'require-trusted-types-for': "'script'",
    });
    expect(CONSOLE_CSP).not.toMatch(/unsafe-|https?:|\*|data:|blob:/);
  });

  test('serves every asset the page references with its content type and the same headers', async () => {
    const page = await get('/console');
    const referenced = [...page.text.matchAll(/\b(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]!);
    expect(referenced).toEqual(expect.arrayContaining(['/console/console.css', '/console/main.js']));
    const types: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', svg: 'image/svg+xml' };
    for (const path of [...referenced, '/console/session.js']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers['content-type']).toBe(types[path.split('.').pop()!]);
      expectSecurityHeaders(res);
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  test('meta.json gives the contract scopes from @platform/core and the service prefixes', async () => {
    const res = await get('/console/meta.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.scopes).toEqual([...SCOPES]);
    expect(res.body.services.map((s: { prefix: string }) => s.prefix)).toEqual(['/events/v0', '/warehouse/v1', '/pipelines/v3']);
  });

  test('a matching If-None-Match gets 304 without a body; HEAD gets the headers only', async () => {
    const first = await get('/console/main.js');
    const again = await get('/console/main.js', { 'if-none-match': first.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    expectSecurityHeaders(again);
    const stale = await get('/console/main.js', { 'if-none-match': '"something-else"' });
    expect(stale.status).toBe(200);

    const head = await client.call(gw.url, 'HEAD', '/console');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength((await get('/console')).text));
  });

  test('unknown files and other methods are refused with the security headers; nothing outside the built files is reachable', async () => {
    for (const path of ['/console/nope.js', '/console/..%2Fpackage.json', '/console/index.html/', '/console//main.js', '/console/main.js.map']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expectSecurityHeaders(res);
      expect(res.body.error.code).toBe('not_found');
    }
    // The client resolves dot segments (and %2e%2e) itself; the gateway then sees /package.json.
    for (const path of ['/console/../package.json', '/console/%2e%2e/package.json']) expect((await get(path)).status).toBe(404);
    const post = await client.call(gw.url, 'POST', '/console', { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expectSecurityHeaders(post);
  });

  test('only /console and /console/* are the console: /consoles is the gateway 404, the admin API is unchanged', async () => {
    const other = await get('/consoles');
    expect(other.status).toBe(404);
    expect(other.headers['content-security-policy']).toBeUndefined();
    const adminCall = await client.call(gw.url, 'GET', '/admin/v1/workspaces', { token: ADMIN_TOKEN });
    expect(adminCall.status).toBe(200);
    expect(adminCall.headers['content-security-policy']).toBeUndefined();
  });

  test('needs no token and does not count as a failed authentication', async () => {
    for (let i = 0; i < 3; i++) expect((await get('/console')).status).toBe(200);
    const res = await client.call(gw.url, 'GET', '/pipelines/v3/pipelines/00000000-0000-4000-8000-000000000000', { token: 'plk_nope' });
    expect(res.status).toBe(401);
    expect(res.headers['x-ratelimit-remaining']).toBe(String(Number(res.headers['x-ratelimit-limit']) - 1));
  });
});

describe('a gateway without a built console', () => {
  test('answers /console with 404 saying so, and serves everything else', async () => {
    const bare = await startGateway({ consoleDir: null });
    try {
      const res = await client.call(bare.url, 'GET', '/console');
      expect(res.status).toBe(404);
      expect(res.body.error.message).toMatch(/not built/);
      expect((await client.call(bare.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await bare.close();
    }
  });
});
