import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { startPlatform, startRedisServer, type Platform, type RedisServer, uniqueDatabaseName } from '@platform/testing';
import { direct, gateway, startLoop, statusCounts, call } from './support/load';

// Slowloris-style clients (headers or body trickled a byte at a time) and oversized bodies
// against the gateway, while ordinary clients keep being served.

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
/** How long a trickling client goes on before giving up on an answer: generous, for a loaded machine. */
const GIVE_UP_MS = 60_000;
let redis: RedisServer;
let platform: Platform;
let port: number;

beforeAll(async () => {
  redis = await startRedisServer();
  platform = await startPlatform({
    name: uniqueDatabaseName('drill_slow'),
    redisUrl: redis.url,
    processes: ['events', 'gateway'],
    env: { GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), GATEWAY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
  });
  port = Number(new URL(platform.gatewayUrl).port);
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await redis?.stop();
});

interface RawAnswer {
  /** What the gateway wrote before it closed the connection (or the drill gave up). */
  text: string;
  status: number;
  ms: number;
  closedByServer: boolean;
  /** When the connection ended (epoch ms). */
  closedAt: number;
}

/**
 * A raw client: writes `head`, then `drip` one byte every `everyMs` for at most `maxMs`,
 * and collects what comes back until the server closes the connection.
 */
function rawClient(head: string, drip: string, everyMs: number, maxMs: number): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closedByServer: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), ms: Date.now() - started, closedByServer, closedAt: Date.now() });
    };
    const giveUp = setTimeout(() => finish(false), maxMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (i < drip.length && !socket.destroyed) socket.write(drip[i++]!);
      }, everyMs);
    });
  });
}

test('headers or a body trickled past the limits get 408 and are closed; ordinary clients are served meanwhile', async () => {
  const event = await direct(platform, 'events').post('/events', { name: 'Drill', starts_at: new Date().toISOString() });
  const ordinary = gateway(platform);
  const loop = startLoop({
    concurrency: 2,
    pauseMs: 40,
    maxRequests: 300,
    maxMs: 15_000,
    request: () => ordinary.get(`/events/v0/events/${event.body.id}`, 60_000),
  });

  // Headers that never end: a new header line byte by byte (a 408 can only be the headers timeout).
  const slowHeaders = Array.from({ length: 30 }, () =>
    rawClient(`GET /events/v0/events/${event.body.id} HTTP/1.1\r\nHost: 127.0.0.1\r\n`, 'X-Drip: ' + 'a'.repeat(200), 100, GIVE_UP_MS),
  );
  // Complete, authenticated headers, then a body of 64 declared bytes, one every 500 ms: complete only
  // after 32 s, so a 408 is the request timeout, long before.
  const slowBodies = Array.from({ length: 10 }, () =>
    rawClient(
      `POST /events/v0/tickets/${randomUUID()}/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${platform.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 64\r\n\r\n',
      `{"gate":"${'a'.repeat(50)}"}`.padEnd(64, ' '),
      500,
      GIVE_UP_MS,
    ),
  );
  const headerAnswers = await Promise.all(slowHeaders);
  const bodyAnswers = await Promise.all(slowBodies);
  const outcomes = await loop.stop();

  for (const answer of [...headerAnswers, ...bodyAnswers]) expect(answer).toMatchObject({ status: 408, closedByServer: true });
  // The gateway kept serving everyone else: every ordinary request answered 200, some of them while
  // all 40 trickling connections were still open.
  const firstClosedAt = Math.min(...[...headerAnswers, ...bodyAnswers].map((a) => a.closedAt));
  expect(statusCounts(outcomes)).toEqual({ '200': outcomes.length });
  expect(outcomes.filter((o) => o.at + o.ms < firstClosedAt).length).toBeGreaterThan(0);
}, 120_000);

test('oversized bodies get 413 payload_too_large, declared or streamed; oversized headers get 431', async () => {
  const auth = { authorization: `Bearer ${platform.token}` };
  const path = `/events/v0/tickets/${randomUUID()}/validate`;
  const declared = await call(`${platform.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: { gate: 'a'.repeat(1024 * 1024 + 16) },
  });
  expect(declared.status).toBe(413);
  expect(declared.body.error.code).toBe('payload_too_large');

  // Chunked (no Content-Length): counted while it streams, cut off past 1 MiB.
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const streamed = await fetch(`${platform.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: new ReadableStream({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(chunk);
        controller.close();
      },
    }),
    duplex: 'half',
    signal: AbortSignal.timeout(10_000),
  });
  expect(streamed.status).toBe(413);
  expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');

  // Headers past node's 16 KiB limit: 431 from node itself.
  const hugeHeader = await rawClient(
    `GET /events/v0/events/${randomUUID()} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    '',
    1_000,
    5_000,
  );
  expect(hugeHeader.status).toBe(431);

  // And the gateway still answers.
  expect((await gateway(platform).get('/healthz')).status).toBe(200);
}, 30_000);
