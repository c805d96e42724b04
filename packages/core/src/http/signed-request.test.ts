import { Router } from 'express';
import request from 'supertest';
import { gzipSync } from 'node:zlib';
import { bodySha256, InternalHeaders, serviceSigningKey, signedIdentityHeaders } from './internal-signature';
import { createLogger } from '../process/logger';
import { DEFAULT_SERVICE_QUOTA_LIMITS } from '../data/quotas';
import { createServiceApp } from './service-app';

const SECRET = 'unit-test-secret-0123456789';
const PATH = '/tickets/1/validate';

function app() {
  const routes = Router();
  routes.post(PATH, (req, res) => {
    res.json({ body: req.body, identity: req.identity });
  });
  routes.get('/tickets/1', (req, res) => {
    res.json({ identity: req.identity });
  });
  return createServiceApp({
    service: 'events',
    logger: createLogger('test', 'silent'),
    internalSecret: SECRET,
    routes,
    ready: { database: async () => undefined },
  });
}

const BODY = JSON.stringify({ gate: 'north' });

function signed(
  options: { service?: 'events' | 'warehouse'; body?: string | Buffer; scopes?: string[] | null; method?: string; path?: string; now?: number } = {},
) {
  return signedIdentityHeaders(
    serviceSigningKey(SECRET, options.service ?? 'events'),
    {
      method: options.method ?? 'POST',
      pathAndQuery: options.path ?? PATH,
      workspaceId: 'ws-1',
      keyId: 'key-1',
      scopes: options.scopes === undefined ? ['tickets:read'] : options.scopes,
      requestId: 'req-1',
      bodySha256: bodySha256(options.body ?? BODY),
    },
    options.now,
  );
}

function post(headers: Record<string, string>, body: string | Buffer = BODY) {
  // As bytes: superagent would serialise a Buffer as JSON.
  return request(app())
    .post(PATH)
    .set(headers)
    .set('content-type', 'application/json')
    .serialize((b: unknown) => b as string)
    .send(body as string);
}

describe('a service answers only what the gateway signed for it (contract section 4)', () => {
  test('a signed request reaches the route with its identity and body', async () => {
    const res = await post(signed()).expect(200);
    expect(res.body).toEqual({
      body: { gate: 'north' },
      identity: { workspaceId: 'ws-1', keyId: 'key-1', scopes: ['tickets:read'], quotas: DEFAULT_SERVICE_QUOTA_LIMITS },
    });
    expect(res.headers['x-request-id']).toBe('req-1');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  test('the quotas signed beside it reach the route; a request signed without them gets the defaults (contract section 20)', async () => {
    const quotas = { pipelines: 5, scheduled_pipelines: 0, webhook_endpoints: 2 };
    const headers = signedIdentityHeaders(serviceSigningKey(SECRET, 'events'), {
      method: 'POST',
      pathAndQuery: PATH,
      workspaceId: 'ws-1',
      keyId: 'key-1',
      scopes: null,
      requestId: 'req-1',
      bodySha256: bodySha256(BODY),
      quotas,
    });
    expect((await post(headers).expect(200)).body.identity.quotas).toEqual(quotas);
    const { [InternalHeaders.quotas]: _value, [InternalHeaders.quotasSignature]: _mac, ...contractOnly } = headers;
    expect((await post(contractOnly).expect(200)).body.identity.quotas).toEqual(DEFAULT_SERVICE_QUOTA_LIMITS);
  });

  test('a GET without a body verifies against the empty body', async () => {
    const res = await request(app())
      .get('/tickets/1')
      .set(signed({ method: 'GET', path: '/tickets/1', body: '' }))
      .expect(200);
    expect(res.body.identity.workspaceId).toBe('ws-1');
  });

  test.each<[string, (h: Record<string, string>) => Record<string, string>, string | undefined]>([
    ['scopes widened to "*"', (h) => ({ ...h, [InternalHeaders.scopes]: '*' }), undefined],
    ['another request id', (h) => ({ ...h, [InternalHeaders.requestId]: 'req-2' }), undefined],
    ['another workspace', (h) => ({ ...h, [InternalHeaders.workspaceId]: 'ws-2' }), undefined],
    ['another body', (h) => h, JSON.stringify({ gate: 'south' })],
    ['no signature', (h) => ({ ...h, [InternalHeaders.signature]: '' }), undefined],
    ['raised quotas', (h) => ({ ...h, [InternalHeaders.quotas]: 'pipelines=9999;scheduled_pipelines=9999;webhook_endpoints=9999' }), undefined],
    ['quotas without their signature', (h) => ({ ...h, [InternalHeaders.quotasSignature]: '' }), undefined],
  ])('a captured signature replayed with %s is 401', async (_what, tamper, body) => {
    const res = await post(tamper(signed()), body ?? BODY).expect(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  test('a signature made for another service is 401', async () => {
    await post(signed({ service: 'warehouse' })).expect(401);
  });

  test('a timestamp more than 5 s ahead or 60 s old is 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    await post(signed({ now: now + 10 })).expect(401);
    await post(signed({ now: now - 65 })).expect(401);
    await post(signed({ now: now + 2 })).expect(200);
  });

  test('a body over 1 MiB cannot be verified: 401 (the gateway answers 413 before it)', async () => {
    const big = JSON.stringify({ gate: 'x'.repeat(1024 * 1024) });
    await post(signed({ body: big }), big).expect(401);
  });
});

describe('request bodies', () => {
  test('a body with content-encoding gzip is 415 unsupported_media_type', async () => {
    const zipped = gzipSync(BODY);
    const res = await post({ ...signed({ body: zipped }), 'content-encoding': 'gzip' }, zipped).expect(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  test('bytes that are not UTF-8 are refused, never replaced with U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"gate":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    const res = await post(signed({ body: bytes }), bytes).expect(400);
    expect(res.body.error.errors[0]).toMatchObject({ in: 'body', field: '', code: 'invalid_json' });
  });
});
