import { startPlatform, startRedisSentinel, uniqueDatabaseName, waitFor, type Platform, type RedisSentinel } from '@platform/testing';
import { call, LOAD_KEY_RATE_LIMITS, statusCounts, startLoop } from './support/load';
import { prepareRules, RULES_ENV, type Rules } from './support/rules';

// A platform on Redis under Sentinel (REDIS_SENTINELS + REDIS_SENTINEL_MASTER, contract section 17):
// the master dies under load, the sentinels promote the replica, and every process follows it
// without a restart, and a run worker is SIGKILLed mid-run; the rules of section 17's fleet bullet
// hold over both gateways throughout (support/rules.ts, smaller than the cluster drill's).

let sentinel: RedisSentinel;
let platform: Platform;
let rules: Rules | undefined;
const lines: { name: string; line: string }[] = [];

beforeAll(async () => {
  sentinel = await startRedisSentinel();
  platform = await startPlatform({
    name: uniqueDatabaseName('drill_sentinel'),
    redis: sentinel,
    processes: [
      'events',
      'pipelines',
      { kind: 'worker', name: 'worker-1' },
      { kind: 'worker', name: 'worker-2' },
      { kind: 'gateway', name: 'gateway-1' },
      { kind: 'gateway', name: 'gateway-2' },
    ],
    env: RULES_ENV,
    onOutput: (name, line) => lines.push({ name, line }),
  });
}, 120_000);

afterAll(async () => {
  await rules?.close();
  await platform?.stop();
  await sentinel?.stop();
});

const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'platform-version': '2024-12-01' });

test('the master and a worker killed under a mixed load through both gateways: reads stay 200, triggers are 202, 409 or 503 with Retry-After and accepted again after the promotion, every accepted run succeeds, every rule of the fleet holds', async () => {
  expect(platform.redisEnv).toEqual({ REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.masterName });
  const pipelines: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await call(`${platform.gatewayUrl}/pipelines/v3/pipelines`, {
      method: 'POST',
      headers: auth(platform.token),
      body: {
        name: `sentinel drill ${i}`,
        source: { connector: 'sample', config: { records: 20, seed: i } },
        destination: { connector: 'postgres', config: { table: 'sentinel_drill_records' } },
      },
    });
    expect(res.status).toBe(201);
    pipelines.push(res.body.id);
  }
  const reader = await platform.createApiKey({ name: 'reader', rateLimits: LOAD_KEY_RATE_LIMITS });
  const triggerer = await platform.createApiKey({ name: 'triggerer', rateLimits: LOAD_KEY_RATE_LIMITS });
  rules = await prepareRules(
    { platform, gatewayUrls: platform.gatewayUrls, logs: () => [...lines] },
    { tickets: 12, ticketsOverMs: 6_000, validationsPerTicket: 3, pipelines: 3, triggersPerRound: 2, rateLimit: 15, maxMs: 60_000 },
  );
  // Rate limits exact over both gateways, and idempotent answers stored, while Redis is healthy.
  const healthy = await rules.whileHealthy();

  const reads = startLoop({
    concurrency: 2,
    pauseMs: 50,
    maxRequests: 600,
    maxMs: 30_000,
    request: (i) => call(`${platform.gatewayUrls[i % 2]}/pipelines/v3/pipelines/${pipelines[0]}`, { headers: auth(reader.token), timeoutMs: 5_000 }),
  });
  const accepted: { pipelineId: string; runId: string }[] = [];
  const triggers = startLoop({
    concurrency: 1,
    pauseMs: 100,
    maxRequests: 300,
    maxMs: 30_000,
    request: async (i) => {
      const pipelineId = pipelines[i % pipelines.length]!;
      const outcome = await call(`${platform.gatewayUrls[i % 2]}/pipelines/v3/pipelines/${pipelineId}/runs`, {
        method: 'POST',
        headers: auth(triggerer.token),
        body: { trigger: 'manual' },
        timeoutMs: 10_000,
      });
      if (outcome.status === 202) accepted.push({ pipelineId, runId: outcome.body.id });
      return outcome;
    },
  });

  rules.start();
  // Load first: the faults land on a platform already answering both loops.
  await waitFor('the load under way', () => triggers.outcomes.filter((o) => o.status === 202).length >= 10 && reads.outcomes.length >= 10, 60_000, 50);
  // A worker SIGKILLed mid-run: its run goes to the other worker once its lock expires.
  const killedRunId = await rules.runningOn('worker-1');
  expect((await platform.kill('worker-1', 'SIGKILL')).signal).toBe('SIGKILL');
  const killedAt = Date.now();
  const { promoted } = await sentinel.killMaster();
  const promotedAt = Date.now();
  expect(await sentinel.master()).toEqual(promoted);
  await waitFor('a trigger accepted after the promotion', () => triggers.outcomes.some((o) => o.at > promotedAt && o.status === 202), 60_000, 100);
  const backAfterMs = Date.now() - promotedAt;
  // Ticks go on after both kills (worker-2 alone schedules now): one that queued a run (a tick
  // while the previous run is active is skipped, and verify() needs a run scheduled after the promotion).
  await waitFor(
    'a schedule tick after the promotion that queued a run',
    () =>
      lines.some(
        ({ name, line }) =>
          name === 'worker-2' && line.includes('schedule tick: run queued') && Date.parse((/"scheduled_for":"([^"]+)"/.exec(line) ?? [])[1] ?? '') > promotedAt,
      ),
    60_000,
    100,
  );
  // Load after: the rules are judged over answers given after the recovery too.
  const recovered = triggers.outcomes.length;
  await waitFor('load answered after the recovery', () => triggers.outcomes.length >= recovered + 10, 60_000, 50);
  const readOutcomes = await reads.stop();
  const triggerOutcomes = await triggers.stop();
  await rules.stop();
  // Connections the failover left ended (ioredis's detector cut them mid-reconnect) and core connected again.
  const revived = lines
    .filter(({ line }) => line.includes('ended without being closed'))
    .map(({ name, line }) => `${name}:${(/"connection":"([^"]+)"/.exec(line) ?? [])[1]}`);
  process.stdout.write(
    `promotion ${promotedAt - killedAt} ms after the kill; triggers accepted again ${backAfterMs} ms after it; connections revived: ${revived.length} ${revived.join(' ')}\n`,
  );

  expect(statusCounts(readOutcomes)).toEqual({ '200': readOutcomes.length });
  expect(triggerOutcomes.filter((o) => ![202, 409, 503].includes(o.status)).map((o) => [o.status, o.error ?? o.body])).toEqual([]);
  for (const o of triggerOutcomes.filter((t) => t.status === 503)) expect(o.headers?.get('retry-after')).toBeTruthy();

  expect(accepted.length).toBeGreaterThan(5);
  const finals = await waitFor(
    'every accepted run to end',
    async () => {
      const runs = await Promise.all(
        accepted.map(
          async (a) => (await call(`${platform.gatewayUrl}/pipelines/v3/pipelines/${a.pipelineId}/runs/${a.runId}`, { headers: auth(platform.token) })).body,
        ),
      );
      return runs.every((r) => ['succeeded', 'failed', 'cancelled'].includes(r?.status)) ? runs : undefined;
    },
    90_000,
    500,
  );
  expect(finals.filter((r) => r.status !== 'succeeded')).toEqual([]);

  // Every rule of the fleet held through both kills.
  const measured = await rules.verify({ killedRunId, ticksAfter: promotedAt, gap: { from: killedAt, to: promotedAt + 15_000 } });
  process.stdout.write(`${JSON.stringify({ ...healthy, ...measured }, null, 1)}\n`);
  await platform.restart('worker-1');
  expect(
    platform
      .processes()
      .filter((p) => !p.running)
      .map((p) => p.name),
  ).toEqual([]);
}, 300_000);
