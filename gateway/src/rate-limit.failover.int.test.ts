import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '@platform/core';
import { startTcpProxy, testRedisUrl, waitFor, type ProxyDirection } from '@platform/testing';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis';
import { allUpstreams, createTestKey, httpClient, startEchoUpstream, startGateway, type EchoUpstream, type HttpClient } from './test/gateway';

let upstream: EchoUpstream;
let client: HttpClient;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await upstream.close();
});

/** A real (silent) logger whose messages are also kept, for the lines the contract asks for. */
function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = new Proxy(createLogger('gateway-test', 'silent'), {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || !['fatal', 'error', 'warn', 'info'].includes(property as string)) return value;
      return (...args: unknown[]) => {
        lines.push(String(args.find((a) => typeof a === 'string') ?? ''));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { logger, lines };
}

const WORKERS = 12;
const LIMIT = 40;
/** Requests a burst may send at most: it stops long before on any working gateway. */
const MAX_REQUESTS = 3_000;

// Contract section 17: a token's count never restarts at zero because Redis was slow for one
// command, and what the gateway accepted from memory counts in Redis once Redis answers again.
describe.each<ProxyDirection>(['request', 'response'])(
  'Redis slow for one command (its %s delayed past the 100 ms timeout) in the middle of a burst',
  (direction) => {
    test('the gateway accepts at most the limit in the window, logs degraded then restored, and Redis ends with exactly what it accepted', async () => {
      const redisUrl = new URL(testRedisUrl());
      const relay = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
      const { logger, lines } = recordingLogger();
      // Production's command timeout: the 400 ms delay below must pass it.
      const gw = await startGateway({
        upstreams: allUpstreams(upstream.url),
        redisUrl: `redis://127.0.0.1:${relay.port}`,
        redisCommandTimeoutMs: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
        limits: { events: LIMIT },
        logger,
      });
      try {
        const { token, keyId } = await createTestKey(gw.stores);
        await waitFor('Redis to be ready', () => gw.redis.status === 'ready', 60_000, 20);
        const restoredLines = () => lines.filter((line) => line.includes('restored')).length;

        let sent = 0;
        let firstAcceptedSentAt = Number.POSITIVE_INFINITY;
        const acceptedAt: number[] = [];
        const statuses: Record<number, number> = {};
        let delayed = false;
        /** 'restored' lines before the delay (a busy machine may time a command out on its own). */
        let restoredBeforeDelay = 0;
        const restoredAfterDelay = () => relay.delayedChunks() > 0 && restoredLines() > restoredBeforeDelay;
        let refusedByRedisAgain = false;
        await Promise.all(
          Array.from({ length: WORKERS }, async () => {
            while (!refusedByRedisAgain && sent < MAX_REQUESTS) {
              sent++;
              const sentAt = Date.now();
              const afterRestore = restoredAfterDelay();
              const reply = await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token });
              statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
              if (reply.status === 200) {
                acceptedAt.push(Date.now());
                firstAcceptedSentAt = Math.min(firstAcceptedSentAt, sentAt);
              }
              // A third of the way into the bucket, the next command (and what follows it on the connection) is late.
              if (!delayed && acceptedAt.length >= LIMIT / 3) {
                delayed = true;
                restoredBeforeDelay = restoredLines();
                relay.delay(400, { direction });
              }
              if (reply.status === 429 && afterRestore) refusedByRedisAgain = true;
            }
          }),
        );

        expect(Object.keys(statuses).sort()).toEqual(['200', '429']);
        expect(relay.delayedChunks()).toBe(1);
        const state = gw.app.state().rateLimiter;
        expect(state.redisFailures).toBeGreaterThan(0);
        expect(state.memoryDecisions).toBeGreaterThan(0);
        expect(lines.filter((line) => line.includes('degraded')).length).toBeGreaterThan(0);
        expect(restoredAfterDelay()).toBe(true);

        // Whatever the gateway accepted was decided at or before its answer arrived, so the answers
        // that arrived within a window of the first accepted request's sending hold the first window.
        const inFirstWindow = acceptedAt.filter((t) => t < firstAcceptedSentAt + 60_000).length;
        expect(inFirstWindow).toBeLessThanOrEqual(LIMIT);
        // Redis counts what memory accepted, and no refused request: once the write-back is done its log
        // is exactly the accepted requests (all within the window: the burst is shorter than one).
        const logKey = `${gw.redisPrefix}rl:key:${keyId}:events`;
        if (acceptedAt.length === inFirstWindow)
          await waitFor("Redis's log to hold every accepted request", async () => (await gw.redis.zcard(logKey)) === acceptedAt.length, 60_000, 50);
      } finally {
        await gw.close();
        await relay.close();
      }
    });
  },
);
