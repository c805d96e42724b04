import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { BUCKET_LIMITS, DEFAULT_QUOTA_LIMITS, SERVICES, type QuotaLimits, type QuotaName } from '@platform/core';
import { neighbourP99Bound, percentile, waitFor } from '@platform/testing';
import { PUBLIC_WEBHOOK_URL } from '../support/fixtures';
import { describe, sleep, type Answer } from '../support/http';
import { refusedWith, type Judge } from '../support/judge';
import { createTenant, expectStatus, type Battlefield, type Tenant } from '../support/platform';
import { prepareProbes, probe, PROBES, summarise, type ProbedTenant, type ProbeName, type Samples, type Summary } from '../support/probes';
import type { Category } from '../support/recorder';

/**
 * Category g: neighbours (contract section 20, issue 27). Workspace A floods the platform in five
 * ways while the battery measures workspace B's service through the gateway (its pipelines list,
 * a ticket validation, a run's trigger-to-start): (a) as many interval schedules of 1 s as A's
 * quota allows, (b) new Idempotency-Keys with large bodies and large answers, (c) offline scan
 * uploads of unknown tickets, (d) postgres connector checks, (e) lists of 100 cron pipelines, six
 * at once. It fails when B's p99 passes `neighbourP99Bound` of its p99 without a flood in the same run,
 * when any of A's stores passes its quota, and on any answer the contract does not allow.
 */

const MIB = 1024 * 1024;
/** How long B is measured without a flood, and under each flood. */
const WINDOW_MS = 12_000;
/** Flood (b) goes on until A's stored answers reach the quota; it gives up after this. */
const IDEMPOTENCY_FLOOD_CAP_MS = 60_000;
/** What the contract lets the last admitted answer add past idempotency_bytes. */
const IDEMPOTENCY_OVERSHOOT_BYTES = MIB;
/** How long A's ticks may take to queue runs for half of its scheduled pipelines before B is measured anyway. */
const TICKS_WAIT_MS = 60_000;
/** Tries of a PATCH that stops one of A's schedules (a 503 waits its Retry-After). */
const PATCH_ATTEMPTS = 10;
/** Creates past a quota that must each be refused. */
const PAST_QUOTA_ATTEMPTS = 2;
/**
 * Records of each run of A's scheduled pipelines: runs of a few hundred ms, so a worker slot is not
 * free at once and a queue of A's runs ahead of B's would cost B seconds.
 */
const A_RUN_RECORDS = 1_000;
/** Entries of A's bulk requests, each the most metadata an item holds (20 keys and values of 500 characters): request and answer about 400 KiB each (bulks of 40 took over the gateway's 10 s on two busy cores). */
const BULK_ENTRIES = 20;
const METADATA_KEYS = Array.from({ length: 20 }, (_, k) => `k${k}`.padEnd(500, '-'));
/** A cron that matches once in four years: A's pipelines keep a schedule (and a next_run_at to render) without ticking. */
const RARE_CRON = { type: 'cron', cron: '0 0 29 2 *', timezone: 'Pacific/Chatham' } as const;
/** A's quotas made small through the admin API where a flood would otherwise take minutes (when the route exists). */
const SMALL_QUOTAS = { webhook_endpoints: 3, idempotency_bytes: 2 * MIB };
/** Both tenants' keys: far above what the floods send, so no 429 of a rate limit mixes with the quotas' answers. */
const GENEROUS_LIMITS = Object.fromEntries(Object.keys(BUCKET_LIMITS).map((bucket) => [bucket, 10_000]));
const QUOTAS_ROUTE = 'GET|PATCH /admin/v1/workspaces/{id}/quotas';

interface Neighbours {
  field: Battlefield;
  category: Category;
  a: Tenant;
  b: ProbedTenant;
  /** The pipelines database: destination tables (d) and the runs of A (how long a worker slot stays taken). */
  db: pg.Client;
  /** B's figures without a flood. */
  quiet: Record<ProbeName, Summary>;
  /** The limits in force for A; `fromApi` false: the admin quotas route is not there, these are the contract's defaults. */
  limits: QuotaLimits;
  fromApi: boolean;
}

/**
 * A's own requests under A's own flood may find a service slower than the gateway's upstream
 * timeout: 503 temporarily_unavailable, which the contract allows (section 4) and never stores.
 * They are counted for the notes, not failed; what A does to B is judged on B's requests.
 */
class Overloads {
  count = 0;
  slowestMs = 0;

  /** True (and counted) when the answer is such a 503. */
  took(answer: Answer): boolean {
    if (answer.status !== 503 || answer.json?.error?.code !== 'temporarily_unavailable') return false;
    this.count++;
    this.slowestMs = Math.max(this.slowestMs, answer.ms);
    return true;
  }

  text(): string {
    return `${this.count} of A's requests got 503 temporarily_unavailable${this.count ? ` (the slowest after ${this.slowestMs} ms)` : ''}`;
  }
}

/** Runs `task` in `workers` loops until `done()` says stop (checked before each call). */
async function repeat(workers: number, done: () => boolean, task: () => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!done()) await task();
    }),
  );
}

/** B's samples while `flood` runs (the probes stop when it ends). */
async function during(n: Neighbours, flood: () => Promise<void>): Promise<Samples> {
  let over = false;
  const flooding = flood().finally(() => (over = true));
  const [samples] = await Promise.all([probe(n.b, () => over), flooding]);
  return samples;
}

/** B's samples while `workers` loops of `task` flood for WINDOW_MS. */
function duringWindow(n: Neighbours, workers: number, task: () => Promise<void>): Promise<Samples> {
  const until = Date.now() + WINDOW_MS;
  return during(n, () => repeat(workers, () => Date.now() > until, task));
}

/** B's p99 of each probe against its bound; every probe error is a failure; the figures go in the notes. */
function judgeB(n: Neighbours, flood: string, samples: Samples, allowance: Partial<Record<ProbeName, number>> = {}): void {
  for (const error of samples.errors) n.category.fail(`${flood}: a request of B`, error);
  for (const name of PROBES) {
    const measured = summarise(samples.ms[name]);
    const bound = neighbourP99Bound(n.quiet[name].p99, allowance[name]);
    const over = measured.p99 > bound ? [`p99 ${measured.p99} ms, over the bound of ${bound} ms (p99 without a flood: ${n.quiet[name].p99} ms)`] : [];
    n.category.note(
      `${flood.padEnd(34)} ${name.padEnd(21)} n=${String(measured.samples).padStart(3)} p50 ${measured.p50} ms, p99 ${measured.p99} ms (bound ${bound} ms)`,
    );
    // A probe that failed has its error counted already; without one, no sample at all is a failure of its own.
    if (measured.samples === 0 && samples.errors.some((e) => e.startsWith(name))) continue;
    n.category.check(`${flood}: B's ${name} p99 (${measured.samples} samples)`, measured.samples === 0 ? ['no sample'] : over);
  }
}

/** 409 conflict, `errors[0].code` quota_exceeded, `quota` and `limit` beside `code` (contract section 20). */
function quotaRefusal(quota: QuotaName, limit: number): Judge {
  return (answer) => {
    const problems = refusedWith(409, 'conflict')(answer);
    if (answer.status !== 409) return problems;
    const error = answer.json?.error;
    if (error?.errors?.[0]?.code !== 'quota_exceeded') problems.push(`errors[0].code ${String(error?.errors?.[0]?.code)}, expected quota_exceeded`);
    if (error?.quota !== quota) problems.push(`error.quota ${String(error?.quota)}, expected ${quota}`);
    if (error?.limit !== limit) problems.push(`error.limit ${String(error?.limit)}, expected ${limit}`);
    return problems;
  };
}

/** Every element of a list (all pages). */
async function listAll(tenant: Tenant, path: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page = expectStatus(await tenant.call('GET', `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), 200, `GET ${path}`);
    all.push(...page.json.data);
    cursor = page.json.next_cursor;
  } while (cursor);
  return all;
}

/** A's quotas answer, or undefined while the route does not exist. */
async function quotasOf(n: Pick<Neighbours, 'field' | 'a'>): Promise<any> {
  const answer = await n.field.admin('GET', `/admin/v1/workspaces/${n.a.workspaceId}/quotas`);
  if (answer.status === 404) return undefined;
  return expectStatus(answer, 200, `GET /admin/v1/workspaces/${n.a.workspaceId}/quotas`).json;
}

/** A's limits: made small where that saves minutes (SMALL_QUOTAS), read back from the admin API; the contract's defaults without it. */
async function limitsOfA(field: Battlefield, a: Tenant, category: Category): Promise<{ limits: QuotaLimits; fromApi: boolean }> {
  const patched = await field.admin('PATCH', `/admin/v1/workspaces/${a.workspaceId}/quotas`, SMALL_QUOTAS);
  if (patched.status === 404) {
    // TODO(quotas): until PATCH /admin/v1/workspaces/{id}/quotas exists, A lives under the contract's defaults.
    category.note(`TODO ${QUOTAS_ROUTE} answered 404: A's limits are the contract's defaults, the checks that read usage are skipped`);
    return { limits: { ...DEFAULT_QUOTA_LIMITS }, fromApi: false };
  }
  const limits = expectStatus(patched, 200, `PATCH /admin/v1/workspaces/${a.workspaceId}/quotas`).json.limits as QuotaLimits;
  return { limits, fromApi: true };
}

async function runsOfA(n: Neighbours): Promise<number> {
  const { rows } = await n.db.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE workspace_id = $1`, [n.a.workspaceId]);
  return Number(rows[0]!.n);
}

async function activeRunsOf(n: Neighbours): Promise<number> {
  const { rows } = await n.db.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE workspace_id = $1 AND status IN ('queued', 'running')`, [
    n.a.workspaceId,
  ]);
  return Number(rows[0]!.n);
}

/**
 * How long A's runs that started between `from` and `to` held their worker slot (ms, sorted; read
 * once they have ended). Runs of one attempt only: a retried run's started_at..finished_at spans
 * its backoff, during which the slot was free.
 */
async function runDurationsOfA(n: Neighbours, from: Date, to: Date): Promise<number[]> {
  const { rows } = await n.db.query<{ ms: string }>(
    `SELECT (extract(epoch FROM finished_at - started_at) * 1000)::bigint AS ms FROM runs
      WHERE workspace_id = $1 AND started_at BETWEEN $2 AND $3 AND finished_at IS NOT NULL AND attempts = 1 ORDER BY 1`,
    [n.a.workspaceId, from, to],
  );
  return rows.map((r) => Number(r.ms));
}

/** (a) Interval schedules of 1 s, as many as A's quota allows; a run of B may wait for one run of A to end, never for A's queue. */
async function floodSchedules(n: Neighbours): Promise<string[]> {
  const { a, category } = n;
  const limit = n.limits.scheduled_pipelines;
  const attempts = limit + PAST_QUOTA_ATTEMPTS;
  const answers: Answer[] = [];
  let next = 0;
  await repeat(
    4,
    () => next >= attempts,
    async () => {
      const i = next++;
      answers.push(
        await a.call('POST', '/pipelines/v3/pipelines', {
          name: `neighbour a ${i}`,
          source: { connector: 'sample', config: { records: A_RUN_RECORDS, seed: i } },
          destination: { connector: 'postgres', config: { table: 'neighbours_a' } },
          schedule: { type: 'interval', every_seconds: 1 },
        }),
      );
    },
  );
  const created = answers.filter((x) => x.status === 201).map((x) => x.json.id as string);
  const refusals = answers.filter((x) => x.status !== 201);
  category.check(
    `a. ${attempts} pipelines with an interval schedule of 1 s (scheduled_pipelines quota ${limit}): at most ${limit} created`,
    created.length > limit ? [`${created.length} created`] : created.length < limit ? [`only ${created.length} created under the quota`] : [],
  );
  for (const refusal of refusals) category.check(`a. a scheduled pipeline past the quota of ${limit}`, quotaRefusal('scheduled_pipelines', limit)(refusal));
  const scheduled = (await listAll(a, '/pipelines/v3/pipelines')).filter((p) => p.schedule !== null).length;
  category.check(`a. A's scheduled pipelines stored ≤ ${limit}`, scheduled > limit ? [`${scheduled} stored`] : []);

  // B is measured once A's ticks have queued a run for half of its pipelines (a scheduler's first passes over
  // a hundred new schedules can take seconds on busy cores): from then on A's queue is full all along.
  const backlogFrom = Date.now();
  let backlog = await runsOfA(n);
  while (backlog < created.length / 2 && Date.now() - backlogFrom < TICKS_WAIT_MS) {
    await sleep(250);
    backlog = await runsOfA(n);
  }
  category.note(`a. ${backlog} runs of A's ticks ${Date.now() - backlogFrom} ms after its schedules were set, then B is measured`);

  const from = new Date();
  const samples = await during(n, () => sleep(WINDOW_MS));
  const to = new Date();
  const { rows: statuses } = await n.db.query<{ status: string; n: string }>(
    `SELECT status, count(*) AS n FROM runs WHERE workspace_id = $1 GROUP BY status ORDER BY status`,
    [a.workspaceId],
  );
  category.note(`a. A's runs at the end of the window: ${statuses.map((r) => `${r.status} ${r.n}`).join(', ') || 'none'}`);

  // The ticks stop: every pipeline of A gets a cron that matches once in four years (flood e lists them).
  // Any other answer than 200 or such a 503 is a failure of its own; the change is tried again so the category goes on.
  const overloads = new Overloads();
  let patched = 0;
  await repeat(
    4,
    () => patched >= created.length,
    async () => {
      const id = created[patched++]!;
      for (let attempt = 1; attempt <= PATCH_ATTEMPTS; attempt++) {
        const answer = await a.call('PATCH', `/pipelines/v3/pipelines/${id}`, { schedule: RARE_CRON });
        if (answer.status === 200) return;
        if (overloads.took(answer)) await sleep(1000 * Number(answer.headers['retry-after'] ?? 1));
        else category.fail('a. PATCH the schedule of a pipeline of A while it ticks', `${describe(answer)}, tried again`);
      }
      throw new Error(`PATCH /pipelines/v3/pipelines/${id}: no 200 in ${PATCH_ATTEMPTS} attempts`);
    },
  );
  category.note(`a. stopping the ticks (PATCH schedule): ${overloads.text()}`);
  await waitFor('the runs of A to drain', async () => (await activeRunsOf(n)) === 0, 180_000, 250);
  // Runs that began in the window and ended after it count too: a long run holds its slot all along.
  const runs = await runDurationsOfA(n, from, to);
  category.note(
    `a. A's runs that started in the window: ${runs.length}, each held a worker slot p50 ${percentile(runs, 0.5)} ms, p99 ${percentile(runs, 0.99)} ms`,
  );
  judgeB(n, 'a. 1 s schedules of A', samples, { 'run trigger-to-start': runs.length > 0 ? percentile(runs, 0.99) : 0 });
  return created;
}

/** Pipelines and webhook endpoints past their quotas (cheap: no flood of B's measure). */
async function createPastQuotas(n: Neighbours): Promise<void> {
  const { a, category, field } = n;
  const limit = n.limits.webhook_endpoints;
  for (const { prefix } of Object.values(SERVICES)) {
    const before = (await listAll(a, `${prefix}/webhook-endpoints`)).length;
    for (let i = before; i < limit + PAST_QUOTA_ATTEMPTS; i++) {
      const answer = await a.call('POST', `${prefix}/webhook-endpoints`, { url: PUBLIC_WEBHOOK_URL, events: ['*'], enabled: false });
      if (i < limit) expectStatus(answer, 201, `webhook endpoint ${i + 1} of ${limit}`);
      else category.check(`${prefix}/webhook-endpoints: endpoint ${i + 1} (quota ${limit})`, quotaRefusal('webhook_endpoints', limit)(answer));
    }
    const stored = (await listAll(a, `${prefix}/webhook-endpoints`)).length;
    category.check(`${prefix}: A's webhook endpoints stored ≤ ${limit}`, stored > limit ? [`${stored} stored`] : []);
  }

  // The pipelines quota (1,000 by default) is brought down to what A has, which the contract allows; then one more is refused.
  const pipelines = (await listAll(a, '/pipelines/v3/pipelines')).length;
  const patched = await field.admin('PATCH', `/admin/v1/workspaces/${a.workspaceId}/quotas`, { pipelines });
  if (patched.status === 404) {
    // TODO(quotas): the pipelines quota is checked once PATCH /admin/v1/workspaces/{id}/quotas exists (1,000 creates otherwise).
    category.note(`TODO ${QUOTAS_ROUTE} answered 404: the pipelines quota (set to what A has, then one more) is not checked`);
    return;
  }
  expectStatus(patched, 200, 'PATCH quotas { pipelines }');
  const answer = await a.call('POST', '/pipelines/v3/pipelines', {
    name: 'neighbour a past the pipelines quota',
    source: { connector: 'sample', config: {} },
    destination: { connector: 'postgres', config: { table: 'neighbours_a' } },
  });
  category.check(`pipeline ${pipelines + 1} with the pipelines quota set to the ${pipelines} A has`, quotaRefusal('pipelines', pipelines)(answer));
  const stored = (await listAll(a, '/pipelines/v3/pipelines')).length;
  category.check(`A's pipelines stored ≤ ${pipelines}`, stored > pipelines ? [`${stored} stored`] : []);
}

/** A bulk request of BULK_ENTRIES updates of one item, each with 20 random metadata values (nothing a store could compress away). */
function largeBulk(itemId: string): Buffer {
  const items = Array.from({ length: BULK_ENTRIES }, () => ({
    id: itemId,
    metadata: Object.fromEntries(METADATA_KEYS.map((key) => [key, randomBytes(375).toString('base64')])),
  }));
  return Buffer.from(JSON.stringify({ items }));
}

/** The bytes an answer takes when stored (status, headers and body); the gateway's own count is the admin API's usage. */
const answerBytes = (answer: Answer) => answer.raw.length + JSON.stringify(answer.headers).length + 3;

/** 429 rate_limited with a whole number of seconds ≥ 1 in Retry-After. */
const quotaFull: Judge = (answer) => {
  const problems = refusedWith(429, 'rate_limited')(answer);
  if (answer.status === 429 && !/^[1-9]\d*$/.test(String(answer.headers['retry-after'] ?? '')))
    problems.push(`Retry-After ${String(answer.headers['retry-after'])}`);
  return problems;
};

/** (b) New Idempotency-Keys with bodies and answers just under 1 MiB until A's stored answers reach idempotency_bytes. */
async function floodIdempotency(n: Neighbours): Promise<void> {
  const { a, category } = n;
  const limit = n.limits.idempotency_bytes;
  const item = expectStatus(await a.call('POST', '/warehouse/v1/items', { sku: `NEIGHBOUR-${randomUUID().slice(0, 8)}`, name: 'neighbour' }), 201, 'item of A')
    .json.id as string;
  const send = (key: string | undefined, body: Buffer) =>
    a.call('POST', '/warehouse/v1/items/bulk', body, key ? { 'idempotency-key': key } : {}, { timeoutMs: 30_000 });
  let stored = 0;
  const overloads = new Overloads();
  let first: { key: string; body: Buffer } | undefined;
  const started = Date.now();
  const done = () => Date.now() - started > IDEMPOTENCY_FLOOD_CAP_MS || (Date.now() - started > WINDOW_MS && stored >= limit);

  const samples = await during(n, () =>
    repeat(2, done, async () => {
      const key = `neighbour-${randomUUID()}`;
      const body = largeBulk(item);
      const answer = await send(key, body);
      if (answer.status === 200) {
        if (answer.raw.length >= MIB) category.fail('b. set-up: a bulk answer under 1 MiB', `${answer.raw.length} bytes: not stored, the flood stores nothing`);
        first ??= { key, body };
        stored = n.fromApi ? ((await quotasOf(n))?.usage?.idempotency_bytes ?? stored) : stored + answerBytes(answer);
      } else if (!overloads.took(answer))
        category.check('b. a new Idempotency-Key of A: 200, or 429 once its stored answers reach the quota', quotaFull(answer));
    }),
  );
  category.note(`b. ${stored} bytes of A's answers stored${n.fromApi ? '' : ' (counted by the battery)'}; ${overloads.text()}`);
  judgeB(n, 'b. new Idempotency-Keys of A', samples);

  if (stored < limit) {
    category.fail(`b. A's stored answers reach idempotency_bytes (${limit})`, `${stored} bytes stored within ${IDEMPOTENCY_FLOOD_CAP_MS / 1000} s`);
    return;
  }
  for (let i = 0; i < 3; i++) {
    category.check(
      `b. a new Idempotency-Key with A's stored answers at the quota (${limit} bytes)`,
      quotaFull(await send(`neighbour-past-${randomUUID()}`, largeBulk(item))),
    );
  }
  const replay = await send(first!.key, first!.body);
  category.check(
    'b. a stored answer of A replayed at the quota',
    replay.status === 200 && replay.headers['idempotent-replayed'] === 'true'
      ? []
      : [`${describe(replay)}, replayed: ${String(replay.headers['idempotent-replayed'] ?? 'no')}`],
  );
  const plain = await send(undefined, largeBulk(item));
  category.check('b. a request of A without an Idempotency-Key at the quota', plain.status === 200 ? [] : [describe(plain)]);

  const quotas = await quotasOf(n);
  if (!quotas) {
    // TODO(quotas): A's stored bytes are read from GET /admin/v1/workspaces/{id}/quotas (usage.idempotency_bytes) once it exists.
    category.note(`TODO ${QUOTAS_ROUTE} answered 404: "A's stored answers ≤ idempotency_bytes + 1 MiB" is not checked`);
    return;
  }
  const usage = Number(quotas.usage?.idempotency_bytes);
  category.check(
    `b. A's stored answers ≤ idempotency_bytes + 1 MiB (${limit + IDEMPOTENCY_OVERSHOOT_BYTES})`,
    usage <= limit + IDEMPOTENCY_OVERSHOOT_BYTES ? [] : [`usage.idempotency_bytes ${String(quotas.usage?.idempotency_bytes)}`],
  );
}

/** (c) Offline uploads of 500 scans of unknown tickets each, one after the other. */
async function floodUnknownScans(n: Neighbours): Promise<void> {
  const { a, category } = n;
  const event = expectStatus(await a.call('POST', '/events/v0/events', { name: 'neighbour a scans', starts_at: '2030-06-01T20:00:00.000Z' }), 201, 'event of A')
    .json.id as string;
  let uploads = 0;
  const overloads = new Overloads();
  // One uploader at full speed is already past what A's key may send by default (400 events requests a minute).
  const samples = await duringWindow(n, 1, async () => {
    const upload = ++uploads;
    const scans = Array.from({ length: 500 }, (_, i) => ({
      scan_id: `neighbour-${upload}-${i}`,
      ticket_id: randomUUID(),
      scanned_at: new Date().toISOString(),
    }));
    const answer = await a.call('POST', `/events/v0/events/${event}/scans`, { scans }, {}, { timeoutMs: 30_000 });
    if (overloads.took(answer)) return;
    const unknown = answer.json?.results?.filter((r: { status: string }) => r.status === 'not_found').length;
    category.check(
      'c. an upload of 500 scans of unknown tickets: 200, every one not_found',
      answer.status === 200 && unknown === 500 ? [] : [`${describe(answer)}, ${unknown} not_found`],
    );
  });
  category.note(`c. ${uploads} uploads of 500 unknown tickets; ${overloads.text()}`);
  judgeB(n, 'c. unknown-ticket scans of A', samples);
}

async function destinationTables(n: Neighbours): Promise<{ count: number; checks: string[] }> {
  const { rows } = await n.db.query<{ name: string }>(
    `SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
  );
  return { count: rows.length, checks: rows.map((r) => r.name).filter((name) => name.split('.')[1]!.startsWith('neighbours_check_')) };
}

/** (d) Connector checks of a postgres destination, each on a table of its own: none is left behind. */
async function floodConnectorChecks(n: Neighbours): Promise<void> {
  const { a, category } = n;
  const before = await destinationTables(n);
  let checks = 0;
  const overloads = new Overloads();
  const samples = await duringWindow(n, 3, async () => {
    const table = `neighbours_check_${++checks}`;
    const answer = await a.call('POST', '/pipelines/v3/connectors/check', { kind: 'destination', connector: 'postgres', config: { table } });
    if (overloads.took(answer)) return;
    category.check(
      'd. a postgres connector check of A: 200 succeeded',
      answer.status === 200 && answer.json?.status === 'succeeded' ? [] : [`${describe(answer)} ${answer.text.slice(0, 120)}`],
    );
  });
  const after = await destinationTables(n);
  category.check(`d. ${checks} connector checks leave no table in the destination database`, [
    ...(after.count !== before.count ? [`${before.count} tables before, ${after.count} after`] : []),
    ...(after.checks.length > 0 ? [`left behind: ${after.checks.slice(0, 5).join(', ')}${after.checks.length > 5 ? ', ...' : ''}`] : []),
  ]);
  category.note(`d. ${checks} connector checks; ${overloads.text()}`);
  judgeB(n, 'd. postgres connector checks of A', samples);
}

/** (e) GET /pipelines?limit=100 of A's cron pipelines, six at once. */
async function floodCronLists(n: Neighbours): Promise<void> {
  const { a, category } = n;
  let lists = 0;
  const overloads = new Overloads();
  const samples = await duringWindow(n, 6, async () => {
    lists++;
    const answer = await a.call('GET', '/pipelines/v3/pipelines?limit=100', undefined, {}, { timeoutMs: 30_000 });
    if (overloads.took(answer)) return;
    const crons = answer.json?.data?.filter((p: { schedule: { type?: string } | null }) => p.schedule?.type === 'cron').length;
    category.check(
      'e. A lists 100 cron pipelines: 200 with 100 of them',
      answer.status === 200 && crons === 100 ? [] : [`${describe(answer)}, ${crons} cron pipelines`],
    );
  });
  category.note(`e. ${lists} lists of 100 cron pipelines; ${overloads.text()}`);
  judgeB(n, 'e. cron lists of A, six at once', samples);
}

export async function attackNeighbours(field: Battlefield, category: Category): Promise<void> {
  const a = await createTenant(field, 'neighbour-a', { keys: 2, rateLimits: GENEROUS_LIMITS });
  const b = await prepareProbes(await createTenant(field, 'neighbour-b', { keys: 2, rateLimits: GENEROUS_LIMITS }));
  const db = new pg.Client({ connectionString: field.platform.databaseUrls.pipelines });
  await db.connect();
  try {
    const { limits, fromApi } = await limitsOfA(field, a, category);
    const quietUntil = Date.now() + WINDOW_MS;
    const quietSamples = await probe(b, () => Date.now() > quietUntil);
    for (const error of quietSamples.errors) category.fail('without a flood: a request of B', error);
    const quiet = Object.fromEntries(PROBES.map((p) => [p, summarise(quietSamples.ms[p])])) as Record<ProbeName, Summary>;
    for (const p of PROBES)
      category.note(`${'without a flood'.padEnd(34)} ${p.padEnd(21)} n=${String(quiet[p].samples).padStart(3)} p50 ${quiet[p].p50} ms, p99 ${quiet[p].p99} ms`);
    const n: Neighbours = { field, category, a, b, db, quiet, limits, fromApi };

    await floodSchedules(n);
    await createPastQuotas(n);
    await floodIdempotency(n);
    await floodUnknownScans(n);
    await floodConnectorChecks(n);
    await floodCronLists(n);
  } finally {
    await db.end();
  }
}
