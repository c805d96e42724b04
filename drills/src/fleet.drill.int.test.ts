import Redis from 'ioredis';
import { startFleet, uniqueDatabaseName, waitFor, type Fleet } from '@platform/testing';
import { call, LOAD_KEY_RATE_LIMITS, statusCounts, startLoop, type Outcome } from './support/load';
import { prepareRules, RULES_ENV, type Rules } from './support/rules';

// The fleet of contract section 17 (what `npm run fleet` runs): a Redis Cluster of 3 masters and 3
// replicas, PgBouncer in transaction mode, 2 gateways, 2 instances of each service behind a
// balancer, 2 run workers. A master dies under load through both gateways; the cluster promotes
// its replica and the platform carries on, and a run worker is SIGKILLed mid-run; every rule of
// section 17's fleet bullet holds over both gateways throughout (support/rules.ts).

const ENQUEUE_TIMEOUT_MS = 2_000;
let fleet: Fleet;
let rules: Rules | undefined;

beforeAll(async () => {
  fleet = await startFleet({
    name: uniqueDatabaseName('drill_fleet'),
    env: {
      ...RULES_ENV,
      PIPELINES_ENQUEUE_TIMEOUT_MS: String(ENQUEUE_TIMEOUT_MS),
    },
  });
}, 180_000);

afterAll(async () => {
  await rules?.close();
  await fleet?.stop();
});

const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'platform-version': '2024-12-01' });

async function createPipelines(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await call(`${fleet.gatewayUrls[i % 2]}/pipelines/v3/pipelines`, {
      method: 'POST',
      headers: auth(fleet.token),
      body: {
        name: `fleet drill ${i}`,
        source: { connector: 'sample', config: { records: 20, seed: i } },
        destination: { connector: 'postgres', config: { table: 'fleet_drill_records' } },
      },
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

test('the fleet: 2 gateways, 2 instances of each service, 2 workers on a 3-master cluster behind PgBouncer, each gateway serving the demo key', async () => {
  const kinds = fleet.processes().map((p) => p.name);
  expect(kinds.sort()).toEqual(
    ['events-1', 'events-2', 'gateway-1', 'gateway-2', 'pipelines-1', 'pipelines-2', 'warehouse-1', 'warehouse-2', 'worker-1', 'worker-2'].sort(),
  );
  expect(fleet.seeds.split(',')).toHaveLength(6);
  expect(await fleet.redis.masters()).toHaveLength(3);
  for (const gateway of fleet.gatewayUrls) {
    const res = await call(`${gateway}/warehouse/v1/items`, { headers: auth(fleet.token) });
    expect(res.status).toBe(200);
  }
  for (const p of fleet.processes()) expect((await call(p.metricsUrl)).status).toBe(200);
});

test('a master and a worker killed under a mixed load through both gateways: reads stay 200, triggers are 202, 409 or a fast 503 with Retry-After, every process is back within 15 s of the promotion, every accepted run succeeds, every rule of the fleet holds, no log shows CROSSSLOT, nor MOVED or ASK outside the failover', async () => {
  const pipelines = await createPipelines(20);
  const reader = await fleet.platform.createApiKey({ name: 'reader', rateLimits: LOAD_KEY_RATE_LIMITS });
  const triggerer = await fleet.platform.createApiKey({ name: 'triggerer', rateLimits: LOAD_KEY_RATE_LIMITS });
  const event = await call(`${fleet.gatewayUrls[0]}/events/v0/events`, {
    method: 'POST',
    headers: auth(fleet.token),
    body: { name: 'Fleet drill', starts_at: new Date().toISOString() },
  });
  expect(event.status).toBe(201);
  rules = await prepareRules(
    { platform: fleet.platform, gatewayUrls: fleet.gatewayUrls, logs: () => fleet.logs() },
    { tickets: 30, ticketsOverMs: 12_000, validationsPerTicket: 4, pipelines: 6, triggersPerRound: 4, rateLimit: 25, maxMs: 60_000 },
  );
  // Rate limits exact over both gateways, and idempotent answers stored, while Redis is healthy.
  const healthy = await rules.whileHealthy();

  const reads = startLoop({
    concurrency: 2,
    pauseMs: 50,
    maxRequests: 600,
    maxMs: 40_000,
    request: (i) => call(`${fleet.gatewayUrls[i % 2]}/events/v0/events/${event.body.id}`, { headers: auth(reader.token), timeoutMs: 5_000 }),
  });
  const accepted: { pipelineId: string; runId: string }[] = [];
  const triggers = startLoop({
    concurrency: 1,
    pauseMs: 100,
    maxRequests: 300,
    maxMs: 40_000,
    request: async (i) => {
      const pipelineId = pipelines[i % pipelines.length]!;
      const outcome = await call(`${fleet.gatewayUrls[i % 2]}/pipelines/v3/pipelines/${pipelineId}/runs`, {
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
  const workerKilledAt = Date.now();
  expect((await fleet.platform.kill('worker-1', 'SIGKILL')).signal).toBe('SIGKILL');
  // The master that holds the runs queue (its keys share the hash slot of `{<queue>}`).
  const runsQueueMaster = await fleet.redis.masterOfKey(`{${fleet.platform.runsQueue}}`);
  const index = (await fleet.redis.masters()).findIndex((m) => m.port === runsQueueMaster.port);
  const killedAt = Date.now();
  const { killed, promoted } = await fleet.killMaster(index);
  const promotedAt = Date.now();
  expect(killed.port).toBe(runsQueueMaster.port);
  expect((await fleet.redis.masterOfKey(`{${fleet.platform.runsQueue}}`)).port).toBe(promoted.port);

  await waitFor('a trigger accepted after the promotion', () => triggers.outcomes.some((o) => o.at > promotedAt && o.status === 202), 60_000, 100);
  const backAfterMs = Date.now() - promotedAt;
  // Ticks go on after both kills (worker-2 alone schedules now): one that queued a run (a tick
  // while the previous run is active is skipped, and verify() needs a run scheduled after the promotion).
  await waitFor(
    'a schedule tick after the promotion that queued a run',
    () =>
      fleet
        .logs('worker-2')
        .some(({ line }) => line.includes('schedule tick: run queued') && Date.parse((/"scheduled_for":"([^"]+)"/.exec(line) ?? [])[1] ?? '') > promotedAt),
    60_000,
    100,
  );
  // Load after: the rules are judged over answers given after the recovery too.
  const recovered = triggers.outcomes.length;
  await waitFor('load answered after the recovery', () => triggers.outcomes.length >= recovered + 10, 60_000, 50);
  const readOutcomes = await reads.stop();
  const triggerOutcomes = await triggers.stop();
  await rules.stop();
  process.stdout.write(
    `worker-1 killed ${killedAt - workerKilledAt} ms before the master; promotion ${promotedAt - killedAt} ms after the kill; triggers accepted again ${backAfterMs} ms after it\n`,
  );

  // Reads: served throughout, on both gateways.
  expect(statusCounts(readOutcomes)).toEqual({ '200': readOutcomes.length });
  expect(readOutcomes.filter((o) => o.at > killedAt && o.at < promotedAt).length).toBeGreaterThan(5);

  // Triggers: accepted, refused as a duplicate, or a 503 with Retry-After in the gap; never another status, never a hang.
  const unexpected = triggerOutcomes.filter((o: Outcome) => ![202, 409, 503].includes(o.status));
  expect(unexpected.map((o) => [o.status, o.error ?? o.body])).toEqual([]);
  for (const o of triggerOutcomes.filter((t) => t.status === 503)) {
    expect(o.body.error.code).toBe('temporarily_unavailable');
    expect(o.headers?.get('retry-after')).toBeTruthy();
  }

  // Nothing acknowledged is lost: every 202 ends succeeded (a job that went with the old master is enqueued again).
  expect(accepted.length).toBeGreaterThan(10);
  const finals = await waitFor(
    'every accepted run to end',
    async () => {
      const runs = await Promise.all(
        accepted.map(
          async (a) => (await call(`${fleet.gatewayUrls[0]}/pipelines/v3/pipelines/${a.pipelineId}/runs/${a.runId}`, { headers: auth(fleet.token) })).body,
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
  await fleet.platform.restart('worker-1');

  // Normal operation again after the failover: runs on every pipeline through both gateways (a
  // pipeline's run of the load may still be active: its trigger is tried again until it is accepted).
  const later = await Promise.all(
    pipelines.slice(0, 10).map(async (pipelineId, i) => {
      const res = await waitFor(`a run of pipeline ${i} accepted after the failover`, async () => {
        const answer = await call(`${fleet.gatewayUrls[i % 2]}/pipelines/v3/pipelines/${pipelineId}/runs`, {
          method: 'POST',
          headers: auth(fleet.token),
          body: { trigger: 'manual' },
        });
        return answer.status === 202 && answer;
      });
      return { pipelineId, runId: res.body.id as string };
    }),
  );
  let laterRuns: unknown[] = [];
  await waitFor(
    'the runs after the failover to succeed',
    async () => {
      laterRuns = await Promise.all(
        later.map(
          async (run) =>
            (await call(`${fleet.gatewayUrls[1]}/pipelines/v3/pipelines/${run.pipelineId}/runs/${run.runId}`, { headers: auth(fleet.token) })).body,
        ),
      );
      return laterRuns.every((r) => (r as { status?: string })?.status === 'succeeded');
    },
    60_000,
    250,
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(laterRuns.filter((r) => (r as { status?: string })?.status !== 'succeeded'))}`);
  });

  // Every process still runs. No process ever sent a cross-slot command, and outside the failover
  // (from the kill to 15 s after the promotion) none met a redirection it did not follow.
  expect(
    fleet
      .processes()
      .filter((p) => !p.running)
      .map((p) => p.name),
  ).toEqual([]);
  const logged = fleet.logs();
  expect(logged.filter(({ line }) => line.includes('CROSSSLOT'))).toEqual([]);
  const redirections = logged.filter(({ line }) => /\bMOVED\b|\bASK \d/.test(line));
  const inFailover = ({ line }: { line: string }) => {
    const at = Date.parse((/"time":"([^"]+)"/.exec(line) ?? [])[1] ?? '');
    return at >= killedAt && at <= promotedAt + 15_000;
  };
  process.stdout.write(`${redirections.length} log lines with a redirection, all in the failover: ${redirections.every(inFailover)}\n`);
  expect(redirections.filter((entry) => !inFailover(entry))).toEqual([]);

  // The platform's keys (queues and the gateway's limiter and idempotency keys), seen from Redis:
  // spread over more than one master, and the gateway's alone on more than one.
  const spread = await keysPerMaster(fleet);
  process.stdout.write(`platform keys per master: ${JSON.stringify(spread)}\n`);
  expect(spread.filter((m) => m.platform > 0).length).toBeGreaterThanOrEqual(2);
  expect(spread.filter((m) => m.gateway > 0).length).toBeGreaterThanOrEqual(2);

  await fleet.redis.restart(killed);
}, 420_000);

/** Keys under the platform's QUEUE_PREFIX on each master, and of those the gateway's (`<prefix>:gateway:`). */
async function keysPerMaster(of: Fleet): Promise<{ master: number; platform: number; gateway: number }[]> {
  const prefix = of.platform.queuePrefix.replace(/[{}]/g, '');
  return Promise.all(
    (await of.redis.masters()).map(async ({ host, port }) => {
      const node = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, batch] = await node.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1_000);
          keys.push(...batch);
          cursor = next;
        } while (cursor !== '0');
        return { master: port, platform: keys.length, gateway: keys.filter((k) => k.includes(`${prefix}:gateway:`)).length };
      } finally {
        node.disconnect();
      }
    }),
  );
}
