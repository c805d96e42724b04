import { createAdminClient, createClient } from './client';
import { PlatformApiError } from './errors';
import { retryingFetch, type Fetch } from './retry';
import { paginate, unwrap } from './unwrap';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A fetch that records what it is sent and answers from a script (a Response, or an Error to throw). */
function scripted(...answers: (Response | Error)[]): Fetch & { sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    sent.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body: await request.text() });
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    if (answer instanceof Error) throw answer;
    return answer.clone();
  };
  return Object.assign(fetch, { sent });
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const errorBody = (code: string, extra: Record<string, unknown> = {}) => ({ error: { code, message: `${code}.`, request_id: 'req-1', ...extra } });

function recordingSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, sleep: (ms) => (waits.push(ms), Promise.resolve()) };
}

const TICKET = '6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b';

describe('createClient', () => {
  test('sends the key, platform-version and, on POST and PATCH only, a generated Idempotency-Key', async () => {
    const fetch = scripted(json(200, { id: TICKET }));
    const platform = createClient({ baseUrl: 'http://gw.test/', apiKey: 'plk_x', fetch });
    await platform.events.POST('/tickets/{id}/validate', { params: { path: { id: TICKET } } });
    await platform.events.GET('/tickets/{id}', { params: { path: { id: TICKET } } });
    const [post, get] = fetch.sent;
    expect(post).toMatchObject({ method: 'POST', url: `http://gw.test/events/v0/tickets/${TICKET}/validate` });
    expect(post!.headers).toMatchObject({
      authorization: 'Bearer plk_x',
      'platform-version': '2024-12-01',
      'idempotency-key': expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(get!.headers['idempotency-key']).toBeUndefined();
    expect(get!.headers['platform-version']).toBe('2024-12-01');
  });

  test("the caller's Idempotency-Key wins", async () => {
    const fetch = scripted(json(201, {}));
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch });
    await platform.warehouse.POST('/items/{id}/stock-adjustments', {
      params: { path: { id: TICKET }, header: { 'Idempotency-Key': 'mine-1' } },
      body: { delta: 1, reason: 'receipt' },
    });
    expect(fetch.sent[0]!.headers['idempotency-key']).toBe('mine-1');
  });

  test('a retry after a network error, a 503 and a 409 in progress sends the same bytes with the same Idempotency-Key', async () => {
    const inProgress = json(409, errorBody('conflict'), { 'retry-after': '1' });
    const fetch = scripted(new TypeError('fetch failed'), json(503, errorBody('temporarily_unavailable')), inProgress, json(201, { ok: true }));
    const { waits, sleep } = recordingSleep();
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch, retry: { sleep, random: () => 0.5 } });
    const result = await unwrap(
      platform.warehouse.POST('/items/{id}/stock-adjustments', { params: { path: { id: TICKET } }, body: { delta: -2, reason: 'sale', note: 'é' } }),
    );
    expect(result).toEqual({ ok: true });
    expect(fetch.sent).toHaveLength(4);
    expect(new Set(fetch.sent.map((s) => s.headers['idempotency-key'])).size).toBe(1);
    expect(new Set(fetch.sent.map((s) => s.body))).toEqual(new Set(['{"delta":-2,"reason":"sale","note":"é"}']));
    // Full jitter without Retry-After (0.5 of 250 ms, then of 500 ms); Retry-After's second plus jitter after the 409.
    expect(waits).toEqual([125, 250, 1125]);
  });

  test("a 429 waits its Retry-After; one asking longer than the bound is returned at once as the caller's error", async () => {
    const fetch = scripted(json(429, errorBody('rate_limited'), { 'retry-after': '2' }), json(200, { data: [], next_cursor: null }));
    const { waits, sleep } = recordingSleep();
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch, retry: { sleep, random: () => 0 } });
    await unwrap(platform.warehouse.GET('/items'));
    expect(waits).toEqual([2000]);

    const long = scripted(json(429, errorBody('rate_limited'), { 'retry-after': '60' }));
    const bounded = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch: long, maxRetryDelayMs: 5_000, retry: { sleep } });
    const error = await unwrap(bounded.warehouse.GET('/items')).catch((err: unknown) => err);
    expect(long.sent).toHaveLength(1);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 60, requestId: 'req-1' });
  });

  test('gives up after maxRetries: the last answer, or the network error as status 0', async () => {
    const { sleep } = recordingSleep();
    const busy = scripted(json(503, errorBody('temporarily_unavailable'), { 'retry-after': '1' }));
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch: busy, maxRetries: 2, retry: { sleep } });
    await expect(unwrap(platform.events.GET('/events'))).rejects.toMatchObject({ status: 503, code: 'temporarily_unavailable' });
    expect(busy.sent).toHaveLength(3);

    const down = scripted(new TypeError('fetch failed'));
    const offline = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch: down, maxRetries: 1, retry: { sleep } });
    const error = (await offline.events.GET('/events').catch((err: unknown) => err)) as PlatformApiError;
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 0, code: 'network_error' });
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(down.sent).toHaveLength(2);
  });

  test('a 409 without Retry-After (another body, a domain conflict) and other 4xx are not retried', async () => {
    const fetch = scripted(
      json(409, errorBody('conflict', { errors: [{ in: 'header', field: 'Idempotency-Key', code: 'reused_with_different_body', message: 'x' }] })),
    );
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch });
    const error = (await unwrap(platform.events.POST('/events', { body: { name: 'Gala' } as never })).catch((err: unknown) => err)) as PlatformApiError;
    expect(fetch.sent).toHaveLength(1);
    expect(error.errors).toEqual([expect.objectContaining({ code: 'reused_with_different_body' })]);
    expect(error.request_id).toBe('req-1');
  });

  test('an error answer that is not the platform body still becomes a PlatformApiError with its status', async () => {
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch: scripted(new Response('<html>bad gateway</html>', { status: 502 })) });
    await expect(unwrap(platform.events.GET('/events'))).rejects.toMatchObject({ status: 502, code: 'http_502', errors: [] });
  });
});

describe('createAdminClient', () => {
  test('sends the admin token; a POST is not sent again after a lost answer (the admin API has no Idempotency-Key), a GET is', async () => {
    const { sleep } = recordingSleep();
    const lost = scripted(new TypeError('socket hang up'), json(201, {}));
    const admin = createAdminClient({ baseUrl: 'http://gw.test', adminToken: 'adm', fetch: lost, retry: { sleep } });
    await expect(admin.POST('/workspaces', { body: { name: 'x' } })).rejects.toMatchObject({ code: 'network_error' });
    expect(lost.sent).toHaveLength(1);
    expect(lost.sent[0]!.headers).toMatchObject({ authorization: 'Bearer adm' });
    expect(lost.sent[0]!.headers['idempotency-key']).toBeUndefined();

    const flaky = scripted(new TypeError('socket hang up'), json(200, { data: [], next_cursor: null }));
    await unwrap(createAdminClient({ baseUrl: 'http://gw.test', adminToken: 'adm', fetch: flaky, retry: { sleep } }).GET('/workspaces'));
    expect(flaky.sent).toHaveLength(2);
  });
});

describe('paginate', () => {
  test('yields every element of every page, following next_cursor', async () => {
    const fetch = scripted(json(200, { data: [{ id: 1 }, { id: 2 }], next_cursor: 'c1' }), json(200, { data: [{ id: 3 }], next_cursor: null }));
    const platform = createClient({ baseUrl: 'http://gw.test', apiKey: 'plk_x', fetch });
    const ids: unknown[] = [];
    for await (const item of paginate((cursor) => platform.warehouse.GET('/items', { params: { query: { cursor, limit: 2 } } })))
      ids.push((item as { id: unknown }).id);
    expect(ids).toEqual([1, 2, 3]);
    expect(fetch.sent.map((s) => new URL(s.url).search)).toEqual(['?limit=2', '?cursor=c1&limit=2']);
  });
});

describe('retryingFetch', () => {
  test('an abort by the caller is not retried', async () => {
    const controller = new AbortController();
    const fetch = scripted(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    controller.abort();
    const retrying = retryingFetch(fetch, { sleep: () => Promise.resolve() });
    await expect(retrying(new Request('http://gw.test/x', { signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(fetch.sent).toHaveLength(1);
  });

  test('every try keeps the request options the caller set (keepalive, cache, credentials, redirect) and its body', async () => {
    const received: Request[] = [];
    const answers = [json(503, errorBody('service_unavailable')), json(200, {})];
    const fetch: Fetch = async (request) => (received.push(request), answers.shift()!);
    const retrying = retryingFetch(fetch, { sleep: () => Promise.resolve() });
    const options = { cache: 'no-store', keepalive: true, credentials: 'omit', redirect: 'error' } as const;
    await retrying(new Request('http://gw.test/x', { method: 'POST', body: '{"a":1}', ...options }));
    expect(received).toHaveLength(2);
    for (const request of received) {
      expect({ cache: request.cache, keepalive: request.keepalive, credentials: request.credentials, redirect: request.redirect }).toEqual(options);
      expect(await request.text()).toBe('{"a":1}');
    }
  });
});
