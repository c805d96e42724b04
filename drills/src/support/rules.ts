import pg from 'pg';
import { startReceiver, waitFor, type Platform, type Receiver } from '@platform/testing';
import { DEFAULT_VERSION } from '@platform/core';
import { call, LOAD_KEY_RATE_LIMITS, startLoop, statusCounts, type Loop, type Outcome } from './load';

/**
 * The rules of contract section 17's fleet bullet, checked under a mixed load through every
 * gateway of one platform while Redis fails over and a worker dies: exact rate limits (6),
 * idempotency across instances (7), one validation per ticket (8, 15), one active run per pipeline
 * (10), one run per tick (13), every acknowledged change's webhook event delivered (11, 17).
 * The cluster drill and the Sentinel drill share it, each at its own size.
 */

/** What every process of a platform under these drills needs on top of its defaults. */
export const RULES_ENV: Record<string, string> = {
  // Schedules: a tick every second (contract 13's minimum is configurable for tests).
  PIPELINES_SCHEDULE_MIN_INTERVAL_S: '1',
  // Webhooks to the drill's loopback receiver; deliveries whose job went with the old master come
  // back after 2 s (production: 30 s, looked at every 15 s); a failed attempt is retried within seconds.
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOKS_REQUEUE_AFTER_MS: '2000',
  WEBHOOKS_REQUEUE_INTERVAL_MS: '500',
  WEBHOOKS_RELAY_POLL_MS: '200',
  WEBHOOKS_RETRY_SCHEDULE_MS: '500,1000,2000,4000',
  // Runs: a worker that dies mid-run loses its job's lock within 20 s and the other worker takes it
  // (production: 30 s). The lock must outlast the failover: a live worker renews it every half
  // duration and cannot while Redis is away, so a shorter lock expires under a live worker during a
  // 4-6 s promotion (with 3 s, an accepted run ended failed). Runs whose job went with the old master
  // are enqueued again after 2 s.
  WORKER_LOCK_DURATION_MS: '20000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  WORKER_REQUEUE_AFTER_MS: '2000',
  WORKER_REQUEUE_INTERVAL_MS: '250',
  PIPELINES_RUN_BACKOFF_MS: '200',
  // A run of 20 records takes 4 steps of 250 ms: long enough to be killed mid-run.
  WORKER_BATCH_SIZE: '5',
  WORKER_STEP_DELAY_MS: '250',
};

export interface RulesTarget {
  platform: Platform;
  gatewayUrls: string[];
  /** Every line every process wrote since the start, oldest first. */
  logs(): { name: string; line: string }[];
}

export interface RulesSizes {
  /** Tickets, each validated `validationsPerTicket` times at once over the gateways, spread over `ticketsOverMs`. */
  tickets: number;
  ticketsOverMs: number;
  validationsPerTicket: number;
  /** Pipelines triggered `triggersPerRound` times at once over the gateways, round after round. */
  pipelines: number;
  triggersPerRound: number;
  /** The per-key limit (pipelines bucket) of the two rate-limited keys. */
  rateLimit: number;
  /** The longest the load runs (stop() ends it earlier). */
  maxMs: number;
}

const VERSION = { 'platform-version': DEFAULT_VERSION };
const auth = (token: string) => ({ authorization: `Bearer ${token}`, ...VERSION });
const RUN_ENDED = ['succeeded', 'failed', 'cancelled'];
/** The rate-limit window of contract section 6. */
const WINDOW_MS = 60_000;

async function admin(target: RulesTarget, method: string, path: string, body?: unknown): Promise<any> {
  const res = await call(`${target.gatewayUrls[0]}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${target.platform.adminToken}` },
    body,
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function expectCreated(url: string, token: string, body: unknown): Promise<any> {
  const res = await call(url, { method: 'POST', headers: auth(token), body });
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The most outcomes accepted in any rolling window of `windowMs`, by send time. */
export function mostInAnyWindow(outcomes: Outcome[], windowMs = WINDOW_MS): number {
  const times = outcomes.map((o) => o.at).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

const isAccepted = (o: Outcome) => o.status >= 200 && o.status < 300;

interface Tagged extends Outcome {
  gateway: number;
}

export interface VerifyOptions {
  killedRunId?: string;
  ticksAfter: number;
  gap: { from: number; to: number };
}

export interface Rules {
  /** Starts every loop; the master and the worker are killed while they run. */
  start(): void;
  /**
   * While Redis is healthy (call before any kill): the rate limit exactly at its bound over every
   * gateway, and idempotency rounds whose stored answers verify() replays after the failover.
   */
  whileHealthy(): Promise<Record<string, unknown>>;
  /** A run running on `worker` now (from its log), to kill it mid-run. */
  runningOn(worker: string): Promise<string>;
  stop(): Promise<void>;
  /**
   * Every rule, after stop(); `killedRunId` (a run whose worker was SIGKILLed) must end succeeded
   * after another pick-up, and ticks must have gone on after `ticksAfter`; `gap` is the failover
   * window (from the master's kill to 15 s after the promotion). Returns what was measured.
   */
  verify(options: VerifyOptions): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * Creates what the rules need (tickets, pipelines, a pipeline with a 1 s schedule, webhook
 * endpoints on a local receiver, keys with a small limit) through the gateways.
 */
export async function prepareRules(target: RulesTarget, sizes: RulesSizes): Promise<Rules> {
  const gateways = target.gatewayUrls;
  const gw = (i: number) => gateways[i % gateways.length]!;
  const load = await target.platform.createApiKey({ name: 'rules load', rateLimits: LOAD_KEY_RATE_LIMITS });
  const receiver: Receiver = await startReceiver();
  const db = {
    events: new pg.Pool({ connectionString: target.platform.databaseUrls.events, max: 2 }),
    pipelines: new pg.Pool({ connectionString: target.platform.databaseUrls.pipelines, max: 2 }),
  };
  const close = async () => {
    await receiver.close();
    await Promise.all([db.events.end(), db.pipelines.end()]);
  };
  try {
    // Webhooks: every event type of the events and pipelines services.
    await expectCreated(`${gw(0)}/events/v0/webhook-endpoints`, load.token, { url: receiver.url('/events'), events: ['*'] });
    await expectCreated(`${gw(1)}/pipelines/v3/webhook-endpoints`, load.token, { url: receiver.url('/pipelines'), events: ['*'] });

    const event = await expectCreated(`${gw(0)}/events/v0/events`, load.token, { name: 'rules drill', starts_at: new Date().toISOString() });
    const tickets: string[] = [];
    for (let i = 0; i < sizes.tickets; i++) {
      tickets.push((await expectCreated(`${gw(i)}/events/v0/events/${event.id}/tickets`, load.token, { holder_name: `holder ${i}` })).id);
    }
    const pipelineBody = (name: string, records: number, schedule?: unknown) => ({
      name,
      source: { connector: 'sample', config: { records, seed: 7 } },
      destination: { connector: 'postgres', config: { table: 'rules_drill_records' } },
      ...(schedule ? { schedule } : {}),
    });
    const pipelines: string[] = [];
    for (let i = 0; i < sizes.pipelines; i++) {
      pipelines.push((await expectCreated(`${gw(i)}/pipelines/v3/pipelines`, load.token, pipelineBody(`rules ${i}`, 20))).id);
    }
    // One run before the load creates the workspace's destination schema and table: the first runs of
    // two pipelines into two new tables of one new schema can race on CREATE SCHEMA (see the report).
    const warmUp = await call(`${gw(0)}/pipelines/v3/pipelines/${pipelines[0]}/runs`, {
      method: 'POST',
      headers: auth(load.token),
      body: { trigger: 'manual' },
    });
    if (warmUp.status !== 202) throw new Error(`warm-up run: ${warmUp.status} ${JSON.stringify(warmUp.body)}`);
    await waitFor(
      'the warm-up run to succeed',
      async () =>
        (await call(`${gw(1)}/pipelines/v3/pipelines/${pipelines[0]}/runs/${warmUp.body.id}`, { headers: auth(load.token) })).body?.status === 'succeeded',
      60_000,
      200,
    );
    const scheduled = await expectCreated(
      `${gw(1)}/pipelines/v3/pipelines`,
      load.token,
      pipelineBody('rules every second', 1, { type: 'interval', every_seconds: 1 }),
    );

    // Two keys limited in the pipelines bucket: one for the exact count while Redis is healthy, one
    // hammered through the failover. The limit is set by PATCH (contract 16); a change in the events
    // bucket of the same map, seen on every gateway, shows that the whole map applies there.
    const limited = await Promise.all(['exact', 'failover'].map((name) => target.platform.createApiKey({ name: `rules limit ${name}`, rateLimits: {} })));
    for (const key of limited) {
      await admin(target, 'PATCH', `/workspaces/${target.platform.workspaceId}/api-keys/${key.id}`, {
        rate_limits: { pipelines: sizes.rateLimit, events: 99_999 },
      });
    }
    await waitFor(
      'the rate limits on every gateway',
      async () => {
        for (const key of limited) {
          for (const url of gateways) {
            const res = await call(`${url}/events/v0/events/${event.id}`, { headers: auth(key.token) });
            if (res.headers?.get('x-ratelimit-limit') !== '99999') return false;
          }
        }
        return true;
      },
      30_000,
      200,
    );
    const [exactKey, failoverKey] = limited as [{ id: string; token: string }, { id: string; token: string }];
    const limitedRead = (token: string, i: number): Promise<Tagged> =>
      call(`${gw(i)}/pipelines/v3/pipelines/${pipelines[0]}`, { headers: auth(token), timeoutMs: 10_000 }).then((o) => ({
        ...o,
        gateway: i % gateways.length,
      }));

    const validations: { ticket: string; outcomes: Outcome[] }[] = [];
    const triggers: { pipelineId: string; outcomes: Outcome[] }[] = [];
    const idempotent: { key: string; name: string; concurrent: Outcome[]; replays: Outcome[] }[] = [];
    const limitedOutcomes: Tagged[] = [];
    const activeViolations: { at: number; rows: unknown[] }[] = [];
    let activeSamples = 0;
    const loops: Loop[] = [];
    const bounded = { pauseMs: 0, maxMs: sizes.maxMs };
    const idempotencyRun = Date.now().toString(36);

    // Idempotency across gateways: one key sent through every gateway at once, then through each in turn.
    const idempotencyRound = async (name: string) => {
      const key = `rules-${idempotencyRun}-${name}`;
      const body = { name: `idempotent ${key}`, starts_at: '2030-01-01T00:00:00Z' };
      const send = (g: number) =>
        call(`${gw(g)}/events/v0/events`, { method: 'POST', headers: { ...auth(load.token), 'idempotency-key': key }, body, timeoutMs: 10_000 });
      const concurrent = await Promise.all(gateways.map((_, g) => send(g)));
      const replays: Outcome[] = [];
      for (let g = 0; g < gateways.length; g++) replays.push(await send(g));
      idempotent.push({ key, name: body.name, concurrent, replays });
      return concurrent[0]!;
    };

    const start = () => {
      // One validation per ticket: each ticket validated at once through every gateway, tickets in turn.
      const perTicketPause = Math.floor(sizes.ticketsOverMs / sizes.tickets);
      loops.push(
        startLoop({
          ...bounded,
          concurrency: 1,
          pauseMs: perTicketPause,
          maxRequests: sizes.tickets,
          request: async (i) => {
            const ticket = tickets[i]!;
            const outcomes = await Promise.all(
              Array.from({ length: sizes.validationsPerTicket }, (_, j) =>
                call(`${gw(j)}/events/v0/tickets/${ticket}/validate`, {
                  method: 'POST',
                  headers: auth(load.token),
                  body: { gate: `gate-${j}` },
                  timeoutMs: 10_000,
                }),
              ),
            );
            validations.push({ ticket, outcomes });
            return outcomes[0]!;
          },
        }),
      );
      // One active run per pipeline: concurrent triggers of one pipeline through every gateway.
      loops.push(
        startLoop({
          ...bounded,
          concurrency: 1,
          pauseMs: 150,
          maxRequests: 1_000,
          request: async (i) => {
            const pipelineId = pipelines[i % pipelines.length]!;
            const outcomes = await Promise.all(
              Array.from({ length: sizes.triggersPerRound }, (_, j) =>
                call(`${gw(j)}/pipelines/v3/pipelines/${pipelineId}/runs`, {
                  method: 'POST',
                  headers: auth(load.token),
                  body: { trigger: 'manual' },
                  timeoutMs: 10_000,
                }),
              ),
            );
            triggers.push({ pipelineId, outcomes });
            return outcomes[0]!;
          },
        }),
      );
      loops.push(
        startLoop({
          ...bounded,
          concurrency: 1,
          pauseMs: 300,
          maxRequests: 200,
          request: (i) => idempotencyRound(`load-${i}`),
        }),
      );
      // The rate limit through the failover: a steady stream on one key over every gateway.
      loops.push(
        startLoop({
          ...bounded,
          concurrency: 2,
          pauseMs: 100,
          maxRequests: 2_000,
          request: async (i) => {
            const outcome = await limitedRead(failoverKey.token, i);
            limitedOutcomes.push(outcome);
            return outcome;
          },
        }),
      );
      // Never two active runs of one pipeline, sampled in the pipelines database (one snapshot per query).
      loops.push(
        startLoop({
          ...bounded,
          concurrency: 1,
          pauseMs: 200,
          maxRequests: 10_000,
          request: async () => {
            const at = Date.now();
            const { rows } = await db.pipelines.query(
              `SELECT pipeline_id, count(*)::int AS active FROM runs WHERE status IN ('queued', 'running') GROUP BY pipeline_id HAVING count(*) > 1`,
            );
            activeSamples++;
            if (rows.length > 0) activeViolations.push({ at, rows });
            return { status: 200, ms: Date.now() - at, at };
          },
        }),
      );
    };

    const whileHealthy = async () => {
      for (let i = 0; i < 8; i++) await idempotencyRound(`healthy-${i}`);
      return { exactLimit: await exactLimit() };
    };

    const exactLimit = async () => {
      // Twice the limit and more at once over every gateway: exactly the limit accepted.
      const total = sizes.rateLimit * 2 + 10;
      const outcomes: Tagged[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          while (next < total) outcomes.push(await limitedRead(exactKey.token, next++));
        }),
      );
      const accepted = outcomes.filter(isAccepted);
      expect(statusCounts(outcomes)).toEqual({ '200': sizes.rateLimit, '429': total - sizes.rateLimit });
      // Every accepted request saw its own place in the one count: Remaining limit-1 ... 0, each once.
      const remaining = accepted.map((o) => Number(o.headers?.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: sizes.rateLimit }, (_, i) => i));
      for (const o of outcomes.filter((r) => r.status === 429)) {
        expect(o.body.error.code).toBe('rate_limited');
        expect(Number(o.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(o.headers?.get('x-ratelimit-remaining')).toBe('0');
      }
      const byGateway = gateways.map((_, g) => accepted.filter((o) => o.gateway === g).length);
      expect(byGateway.every((n) => n > 0)).toBe(true);
      return { sent: total, accepted: accepted.length, acceptedByGateway: byGateway, limit: sizes.rateLimit };
    };

    const runningOn = async (worker: string) =>
      waitFor(
        `a run running on ${worker}`,
        async () => {
          const taken = target
            .logs()
            .filter((l) => l.name === worker && l.line.includes('run job taken'))
            .map((l) => (/"run_id":"([^"]+)"/.exec(l.line) ?? [])[1])
            .filter((id): id is string => !!id)
            .slice(-10);
          if (taken.length === 0) return undefined;
          const { rows } = await db.pipelines.query(`SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND status = 'running' AND records_read > 0`, [taken]);
          return rows[0]?.id as string | undefined;
        },
        60_000,
        50,
      );

    const stop = async () => {
      // Every ticket gets its validations (that loop ends by itself); the other loops stop now.
      await waitFor('every ticket validated', () => validations.length === sizes.tickets, 120_000, 100);
      await Promise.all(loops.map((l) => l.stop()));
      // The ticks stop too: verify() waits for every tick's run.
      const unschedule = await call(`${gw(0)}/pipelines/v3/pipelines/${scheduled.id}`, {
        method: 'PATCH',
        headers: auth(load.token),
        body: { schedule: null },
      });
      expect(unschedule.status).toBe(200);
    };

    const verify = async ({ killedRunId, ticksAfter, gap }: VerifyOptions) => {
      const measured: Record<string, unknown> = {};

      // --- Tickets: exactly one 200 per ticket, the others 409 naming the first; history and stats agree.
      expect(validations).toHaveLength(sizes.tickets);
      const validationStatuses = statusCounts(validations.flatMap((v) => v.outcomes));
      for (const v of validations) {
        expect(v.outcomes.map((o) => o.status).sort()).toEqual([200, ...Array<number>(sizes.validationsPerTicket - 1).fill(409)]);
        const winner = v.outcomes.find((o) => o.status === 200)!;
        for (const loser of v.outcomes.filter((o) => o.status === 409)) {
          expect(loser.body.error).toMatchObject({ ticket_id: v.ticket, validated_at: winner.body.validated_at, gate: winner.body.gate });
        }
        const history = await call(`${gw(1)}/events/v0/tickets/${v.ticket}/checkins`, { headers: auth(load.token) });
        expect(history.status).toBe(200);
        const actions = (history.body.data as { action: string }[]).map((c) => c.action).sort();
        expect(actions).toEqual(['validated', ...Array<string>(sizes.validationsPerTicket - 1).fill('rejected_duplicate')].sort());
      }
      const stats = await call(`${gw(0)}/events/v0/events/${event.id}/stats`, { headers: auth(load.token) });
      expect(stats.body).toMatchObject({
        tickets: { total: sizes.tickets, issued: 0, validated: sizes.tickets },
        rejected_duplicates: sizes.tickets * (sizes.validationsPerTicket - 1),
      });
      measured.tickets = { tickets: sizes.tickets, validations: validationStatuses };

      // --- Runs: every trigger 202, 409 naming the active run, or 503 with Retry-After in the gap;
      // never two active runs of one pipeline; runs never overlap; every 202 ends succeeded.
      const triggerOutcomes = triggers.flatMap((t) => t.outcomes);
      expect(triggerOutcomes.filter((o) => ![202, 409, 503].includes(o.status)).map((o) => [o.status, o.error ?? o.body])).toEqual([]);
      for (const o of triggerOutcomes.filter((t) => t.status === 409)) expect(o.body.error.active_run_id).toEqual(expect.any(String));
      for (const o of triggerOutcomes.filter((t) => t.status === 503)) expect(o.headers?.get('retry-after')).toBeTruthy();
      const acceptedRuns = triggers.flatMap((t) => t.outcomes.filter((o) => o.status === 202).map((o) => o.body.id as string));
      expect(acceptedRuns.length).toBeGreaterThan(sizes.pipelines);
      expect(activeViolations).toEqual([]);

      const ended = await waitFor(
        'every accepted and scheduled run to end',
        async () => {
          const { rows } = await db.pipelines.query(
            `SELECT id, pipeline_id, status, attempts, error_code, error_message, scheduled_for, created_at, started_at, finished_at FROM runs
              WHERE id = ANY($1::uuid[]) OR pipeline_id = $2::uuid ORDER BY pipeline_id, started_at`,
            [killedRunId ? [...acceptedRuns, killedRunId] : acceptedRuns, scheduled.id],
          );
          return rows.every((r) => RUN_ENDED.includes(r.status)) && rows.length >= acceptedRuns.length ? rows : undefined;
        },
        120_000,
        500,
      );
      expect(ended.filter((r) => r.status !== 'succeeded').map((r) => [r.id, r.status, r.attempts, r.error_code, r.error_message])).toEqual([]);
      const { rows: allRuns } = await db.pipelines.query(
        `SELECT pipeline_id, started_at, finished_at FROM runs WHERE pipeline_id = ANY($1::uuid[]) AND started_at IS NOT NULL ORDER BY pipeline_id, started_at`,
        [[...pipelines, scheduled.id]],
      );
      const overlaps = allRuns.filter((r, i) => i > 0 && allRuns[i - 1]!.pipeline_id === r.pipeline_id && r.started_at < allRuns[i - 1]!.finished_at);
      expect(overlaps).toEqual([]);
      // Concurrent triggers of one pipeline: a second 202 only once the first run had ended before
      // that answer came back (a trigger slowed by the failover may arrive after a whole run). Runs
      // in the order they ran: created_at is when a trigger arrived, which may precede an earlier insert.
      const endedById = new Map(ended.map((r) => [r.id as string, r]));
      const roundsWithSeveral = triggers.filter((t) => t.outcomes.filter((o) => o.status === 202).length > 1);
      const tooMany = roundsWithSeveral.flatMap((t) => {
        const accepted = t.outcomes
          .filter((o) => o.status === 202)
          .map((o) => ({ answeredAt: o.at + o.ms, run: endedById.get(o.body.id)! }))
          .sort((a, b) => a.run.started_at - b.run.started_at);
        return accepted.slice(1).flatMap((later, i) => {
          const earlier = accepted[i]!.run;
          return earlier.finished_at.getTime() <= later.answeredAt
            ? []
            : [{ earlier: earlier.id, later: later.run.id, finished: earlier.finished_at, answeredAt: new Date(later.answeredAt) }];
        });
      });
      expect(tooMany).toEqual([]);
      if (killedRunId) {
        const killed = ended.find((r) => r.id === killedRunId);
        expect(killed).toMatchObject({ status: 'succeeded' });
        expect(killed.attempts).toBeGreaterThanOrEqual(2);
      }
      measured.runs = {
        triggers: statusCounts(triggerOutcomes),
        accepted: acceptedRuns.length,
        pickedUpAgain: ended.filter((r) => r.attempts > 1 && r.pipeline_id !== scheduled.id).length,
        activeSamples,
        overlaps: overlaps.length,
        roundsWithSeveral202: roundsWithSeveral.length,
      };

      // --- One run per tick: scheduled_for unique, on the schedule's 1 s grid, and no tick handled by
      // two workers (each tick is one "schedule tick" log line: a run, or a skip while a run was active).
      const ticks = ended.filter((r) => r.pipeline_id === scheduled.id).map((r) => (r.scheduled_for as Date).getTime());
      expect(ticks.some((t) => t < gap.from)).toBe(true);
      expect(new Set(ticks).size).toBe(ticks.length);
      const sorted = [...ticks].sort((a, b) => a - b);
      for (const t of sorted) expect((t - sorted[0]!) % 1_000).toBe(0);
      expect(sorted[sorted.length - 1]).toBeGreaterThan(ticksAfter);
      const tickLines = target
        .logs()
        .filter((l) => l.line.includes('schedule tick') && l.line.includes(scheduled.id))
        .map((l) => ({ worker: l.name, scheduledFor: (/"scheduled_for":"([^"]+)"/.exec(l.line) ?? [])[1], created: l.line.includes('run queued') }));
      const perTick = new Map<string, number>();
      for (const t of tickLines) perTick.set(t.scheduledFor!, (perTick.get(t.scheduledFor!) ?? 0) + 1);
      expect([...perTick].filter(([, n]) => n > 1)).toEqual([]);
      const span = (sorted[sorted.length - 1]! - sorted[0]!) / 1_000 + 1;
      measured.schedule = {
        runs: ticks.length,
        skippedWhileActive: tickLines.filter((t) => !t.created).length,
        gridTicks: span,
        missed: span - perTick.size,
        byWorker: Object.fromEntries([...new Set(tickLines.map((t) => t.worker))].map((w) => [w, tickLines.filter((t) => t.worker === w).length])),
      };

      // --- Idempotency. Every answer is 201, 409 (the first still running, Retry-After: 1) or 503 (Redis
      // away), and one key never answers two different resources.
      const rounds = idempotent.map((round) => {
        const all = [...round.concurrent, ...round.replays];
        expect(all.filter((o) => ![201, 409, 503].includes(o.status)).map((o) => [o.status, o.body])).toEqual([]);
        for (const o of all.filter((a) => a.status === 409)) expect(o.headers?.get('retry-after')).toBe('1');
        const created = all.filter((o) => o.status === 201);
        expect(new Set(created.map((o) => o.body.id)).size).toBeLessThanOrEqual(1);
        expect(created.filter((o) => o.headers?.get('idempotent-replayed') !== 'true').length).toBeLessThanOrEqual(1);
        // Healthy: answered a second before the master's kill (its writes replicated), or sent after the failover window.
        const healthy = all.every((o) => o.at + o.ms < gap.from - 1_000 || o.at > gap.to);
        return { round, healthy, id: created[0]?.body.id as string | undefined };
      });
      // Keys used while Redis was healthy: the stored answer replayed through every gateway after the
      // failover, and one created event.
      const strict = rounds.filter((r) => r.healthy);
      expect(strict.length).toBeGreaterThanOrEqual(8);
      // A replay answered 503 (the gateway could not reach Redis at that moment; a client retries
      // the same key) is sent again until it is answered otherwise: the stored answer must come back.
      let replaysRefused = 0;
      for (const { round, id } of strict) {
        expect(id).toEqual(expect.any(String));
        for (let g = 0; g < gateways.length; g++) {
          const replay = await waitFor(
            `the replay of ${round.key} through gateway ${g} answered without a 503`,
            async () => {
              const answer = await call(`${gw(g)}/events/v0/events`, {
                method: 'POST',
                headers: { ...auth(load.token), 'idempotency-key': round.key },
                body: { name: round.name, starts_at: '2030-01-01T00:00:00Z' },
              });
              if (answer.status !== 503) return answer;
              replaysRefused++;
              return undefined;
            },
            60_000,
            250,
          );
          expect([replay.status, replay.body.id, replay.headers?.get('idempotent-replayed')]).toEqual([201, id, 'true']);
        }
      }
      const idempotencyUnavailable = target.logs().filter((l) => l.line.includes('idempotency unavailable'));
      const eventsNamed = async (names: string[]) =>
        (await db.events.query(`SELECT name, count(*)::int AS n FROM events WHERE name = ANY($1::text[]) GROUP BY name`, [names])).rows as {
          name: string;
          n: number;
        }[];
      const createdEvents = await eventsNamed(strict.map((r) => r.round.name));
      expect(createdEvents.filter((e) => e.n !== 1)).toEqual([]);
      expect(createdEvents).toHaveLength(strict.length);
      // Keys used in the failover window: measured, not asserted. A gateway that cannot write the
      // answer it got (Redis away) still sends it, and the key's claim then holds until its TTL.
      const inGap = rounds.filter((r) => !r.healthy);
      const answeredInGap = inGap.filter((r) => r.id);
      let replayedAfterGap = 0;
      for (const { round, id } of answeredInGap) {
        const replay = await call(`${gw(1)}/events/v0/events`, {
          method: 'POST',
          headers: { ...auth(load.token), 'idempotency-key': round.key },
          body: { name: round.name, starts_at: '2030-01-01T00:00:00Z' },
        });
        expect([201, 409, 503]).toContain(replay.status);
        if (replay.status === 201 && replay.body.id === id) replayedAfterGap++;
      }
      const gapEvents = await eventsNamed(inGap.map((r) => r.round.name));
      measured.idempotency = {
        keysWhileHealthy: strict.length,
        keysInFailover: inGap.length,
        answeredInFailover: answeredInGap.length,
        answerReplayedAfterFailover: replayedAfterGap,
        keysInFailoverWithMoreThanOneEvent: gapEvents.filter((e) => e.n > 1).length,
        answersNotStored: target.logs().filter((l) => l.line.includes('idempotency record not written')).length,
        // Replays of healthy keys after the failover that met a 503 first, and the gateways' reasons.
        replaysAfterFailoverRefused: replaysRefused,
        idempotencyUnavailableLines: idempotencyUnavailable.slice(-5).map((l) => `${l.name}: ${l.line.slice(0, 300)}`),
        concurrent: statusCounts(idempotent.flatMap((r) => r.concurrent)),
        replays: statusCounts(idempotent.flatMap((r) => r.replays)),
      };

      // --- The limit through the failover: no rolling window admits more than the limit over one gateway.
      expect(limitedOutcomes.filter((o) => ![200, 429].includes(o.status)).map((o) => [o.status, o.error ?? o.body])).toEqual([]);
      const limitedAccepted = limitedOutcomes.filter(isAccepted);
      const perGateway = gateways.map((_, g) => mostInAnyWindow(limitedAccepted.filter((o) => o.gateway === g)));
      for (const most of perGateway) expect(most).toBeLessThanOrEqual(sizes.rateLimit);
      // While Redis is healthy the count is one over both gateways.
      const beforeGap = limitedAccepted.filter((o) => o.at + o.ms < gap.from);
      expect(mostInAnyWindow(beforeGap)).toBeLessThanOrEqual(sizes.rateLimit);
      // Across gateways during a Redis gap each gateway is bounded on its own (section 17, limiter.md).
      expect(mostInAnyWindow(limitedAccepted)).toBeLessThanOrEqual(sizes.rateLimit * gateways.length);
      measured.rateLimitThroughFailover = {
        limit: sizes.rateLimit,
        sent: limitedOutcomes.length,
        acceptedBeforeTheGap: beforeGap.length,
        mostInAWindowPerGateway: perGateway,
        mostInAWindowOverAll: mostInAnyWindow(limitedAccepted),
      };

      // --- Webhooks: every acknowledged change's event arrived, duplicates under the same webhook-id.
      const validatedTickets = validations.map((v) => v.ticket);
      const scheduledRuns = ended.filter((r) => r.pipeline_id === scheduled.id).map((r) => r.id as string);
      const expected = [
        ...validatedTickets.map((id) => `ticket.validated ${id}`),
        ...[...acceptedRuns, ...scheduledRuns].flatMap((id) => [`run.queued ${id}`, `run.succeeded ${id}`]),
      ];
      const deliveries = () =>
        [...receiver.at('/events'), ...receiver.at('/pipelines')].map((r) => {
          const body = JSON.parse(r.body) as { id: string; type: string; data: { id: string } };
          return { webhookId: r.headers['webhook-id'] as string, body: r.body, event: `${body.type} ${body.data.id}`, eventId: body.id };
        });
      const missing = () => {
        const seen = new Set(deliveries().map((d) => d.event));
        return expected.filter((e) => !seen.has(e));
      };
      await waitFor('every acknowledged change to arrive at the receiver', () => missing().length === 0, 120_000, 500).catch((err: Error) => {
        throw new Error(`${err.message}; missing ${missing().length}: ${missing().slice(0, 10).join(', ')}`);
      });
      const all = deliveries();
      const byWebhookId = new Map<string, Set<string>>();
      for (const d of all) {
        expect(d.webhookId).toBe(d.eventId);
        byWebhookId.set(d.webhookId, (byWebhookId.get(d.webhookId) ?? new Set()).add(d.body));
      }
      expect([...byWebhookId].filter(([, bodies]) => bodies.size > 1)).toEqual([]);
      const idsPerEvent = new Map<string, Set<string>>();
      const expectedSet = new Set(expected);
      for (const d of all.filter((x) => expectedSet.has(x.event))) idsPerEvent.set(d.event, (idsPerEvent.get(d.event) ?? new Set()).add(d.webhookId));
      expect([...idsPerEvent].filter(([, ids]) => ids.size > 1)).toEqual([]);
      measured.webhooks = { expected: expected.length, deliveries: all.length, duplicates: all.length - byWebhookId.size };
      return measured;
    };

    return { start, whileHealthy, runningOn, stop, verify, close };
  } catch (err) {
    await close();
    throw err;
  }
}
