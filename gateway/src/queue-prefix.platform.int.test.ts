// Contract sections 11, 17, 20: two platforms on one Redis share nothing there; the gateway's keys
// follow QUEUE_PREFIX. Two gateway processes (built dist) on one database, so one API key works on
// both, and one Redis, each with a QUEUE_PREFIX of its own (the second a Cluster hash tag): a key's
// rate-limit count and the key-change channel are each gateway's own.
import { Redis } from 'ioredis';
import { deleteRedisKeys, redisKeys, startPlatform, testRedisUrl, uniqueDatabaseName, type Platform } from '@platform/testing';
import { keyChangeChannel } from './key-changes';
import { gatewayRedisPrefix } from './redis';

let platform: Platform;
let redis: Redis;
const otherTag = uniqueDatabaseName('other');
const OTHER_QUEUE_PREFIX = `{${otherTag}}`;

beforeAll(async () => {
  redis = new Redis(testRedisUrl());
  platform = await startPlatform({
    name: uniqueDatabaseName('prefix'),
    processes: ['gateway', { kind: 'gateway', name: 'gateway-2', env: { QUEUE_PREFIX: OTHER_QUEUE_PREFIX } }],
  });
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await deleteRedisKeys(otherTag, testRedisUrl());
  redis.disconnect();
});

const listEvents = (gateway: string, token: string) => fetch(`${gateway}/events/v0/events`, { headers: { authorization: `Bearer ${token}` } });

test('a key limited to 3 requests a minute gets 3 on each platform’s gateway: the counts are not shared', async () => {
  const [first, second] = platform.gatewayUrls as [string, string];
  const created = await fetch(`${first}/admin/v1/workspaces/${platform.workspaceId}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platform.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'prefix', rate_limits: { events: 3 } }),
  });
  expect(created.status).toBe(201);
  const { id, token } = (await created.json()) as { id: string; token: string };

  // The events service does not run: an admitted request is 503, a refused one 429.
  const statuses = async (gateway: string) => {
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) seen.push((await listEvents(gateway, token)).status);
    return seen;
  };
  expect(await statuses(first)).toEqual([503, 503, 503, 429]);
  expect(await statuses(second)).toEqual([503, 503, 503, 429]);

  const firstKeys = await redisKeys(platform.queuePrefix, testRedisUrl());
  const secondKeys = await redisKeys(otherTag, testRedisUrl());
  expect(firstKeys).toContain(`${gatewayRedisPrefix(platform.queuePrefix)}rl:key:${id}:events`);
  expect(secondKeys).toContain(`${otherTag}:gateway:rl:key:${id}:events`);
  // No key of the second gateway carries the hash tag: they spread over every Cluster master.
  expect((await redis.keys(`${OTHER_QUEUE_PREFIX}*`)).length).toBe(0);
});

test('each gateway listens for key changes on its own platform’s channel', async () => {
  const subscribers = async (queuePrefix: string) => Number((await redis.pubsub('NUMSUB', keyChangeChannel(gatewayRedisPrefix(queuePrefix))))[1]);
  expect(await subscribers(platform.queuePrefix)).toBe(1);
  expect(await subscribers(OTHER_QUEUE_PREFIX)).toBe(1);
  expect(keyChangeChannel(gatewayRedisPrefix(OTHER_QUEUE_PREFIX))).toBe(`${otherTag}:gateway:api-key-revocations`);
});
