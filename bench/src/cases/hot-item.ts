import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { adminCall, benchWorkspace, type BenchContext } from '../context';
import { GatewayClient, type Answer } from '../gateway-client';
import { spread, type Spread } from '../spread';
import { percentile, sleep } from '../stats';

export interface HotItemPlan {
  /** Paired rounds; the order of the two variants alternates every round. */
  rounds: number;
  /** Units on the level at the start of each variant's run; the clients take them one at a time. */
  stock: number;
  clients: number;
}

type Variant = 'reserve' | 'adjust';

/** One variant's run on a fresh item: what the clients saw, and what the API and the database say afterwards. */
export interface HotItemRun {
  round: number;
  variant: Variant;
  seconds: number;
  /** Units that left the level, counted from the API and the database after the run (not by the clients). */
  unitsOut: number;
  unitsPerSecond: number;
  /** Committed units beyond the stock: the larger of the API's and the database's count. Must be 0. */
  oversold: number;
  /** On hand and reserved at the level after the run (0 / 0: emptied). */
  left: { onHand: number; reserved: number };
  /** Statuses the clients got, by request kind (`reserve`, `commit`, `adjust`). */
  statuses: Record<string, Record<string, number>>;
  retried: number;
}

export interface HotItemResults {
  stock: number;
  clients: number;
  runs: HotItemRun[];
  /** Per round: committed reservations per second, adjustments per second. */
  reservationsPerSecond: Spread;
  adjustmentsPerSecond: Spread;
  /** Per round: reservations per second over adjustments per second (a reservation is two requests). */
  reserveOverAdjust: Spread;
  /** Over every round's requests that took a unit, ms. */
  latencyMs: {
    reserve: { p50: number; p99: number };
    commit: { p50: number; p99: number };
    /** Reserve then commit, as the client waited for both. */
    reservation: { p50: number; p99: number };
    adjust: { p50: number; p99: number };
  };
  oversold: number;
  /** Runs whose level still had units available at the end: clients that stopped too early. */
  notEmptied: number;
  /** Units left reserved at the end of the runs: reservations made by a first try whose answer was lost (5xx); they expire. */
  leftReserved: number;
  /** Answers sent again with the same Idempotency-Key (429, 5xx, first try still running), over every run. */
  retried: number;
}

/** The highest per-key limit a key may have (admin API), in the warehouse bucket; several keys so the limiter never paces the clients. */
const KEY_LIMIT = 100_000;
const KEYS = 10;
/** Answers sent again, over all clients of a run, before the run is called broken. */
const MAX_OTHER_ANSWERS = 2_000;

interface Target {
  itemId: string;
  locationId: string;
}

interface ClientLog {
  statuses: Record<string, Record<string, number>>;
  reserve: number[];
  commit: number[];
  reservation: number[];
  adjust: number[];
  other: number;
}

const errorCode = (answer: Answer): string | undefined => {
  try {
    return (JSON.parse(answer.text) as { error?: { errors?: { code?: string }[] } }).error?.errors?.[0]?.code;
  } catch {
    return undefined;
  }
};

function count(log: ClientLog, kind: string, answer: Answer): void {
  const byStatus = (log.statuses[kind] ??= {});
  byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
}

/** Answers a client sends again (with the same Idempotency-Key): rate limited, unavailable, no answer in time, the first try still running. */
const retried = (answer: Answer) => answer.status === 429 || answer.status >= 500 || (answer.status === 409 && errorCode(answer) === undefined);

/**
 * One POST as a careful client sends it (contract section 7): with an Idempotency-Key, sent again
 * with the same key after an answer that says nothing was decided, so a retry never takes a second
 * unit. (A 5xx answer is not stored by the gateway: a first try that still completed in the service
 * after the gateway gave up on it shows in the audit as units left reserved.)
 */
async function post(client: GatewayClient, log: ClientLog, kind: string, path: string, body?: unknown): Promise<Answer> {
  const key = randomUUID();
  for (;;) {
    const answer = await client.request('POST', path, body, { 'idempotency-key': key });
    count(log, kind, answer);
    if (!retried(answer)) return answer;
    if (++log.other > MAX_OTHER_ANSWERS)
      throw new Error(`${kind}: ${answer.status} ${answer.text.slice(0, 300)} (more than ${MAX_OTHER_ANSWERS} such answers)`);
    await sleep(answer.status === 409 ? 1_000 : 50);
  }
}

const isEmpty = (answer: Answer) => answer.status === 409 && errorCode(answer) === 'insufficient_stock';

/** One client: reserve 1 unit and commit it, again and again, until a reservation is refused for insufficient stock. */
async function reserveUntilEmpty(client: GatewayClient, target: Target, log: ClientLog): Promise<void> {
  for (;;) {
    const started = performance.now();
    const reserved = await post(client, log, 'reserve', `/warehouse/v1/items/${target.itemId}/reservations`, { location_id: target.locationId, quantity: 1 });
    if (isEmpty(reserved)) return;
    if (reserved.status !== 201) throw new Error(`reserve: ${reserved.status} ${reserved.text.slice(0, 300)}`);
    log.reserve.push(reserved.ms);
    const { id } = JSON.parse(reserved.text) as { id: string };
    const committed = await post(client, log, 'commit', `/warehouse/v1/reservations/${id}/commit`);
    // Not active any more after a retry: the first try (its answer lost) committed it.
    if (committed.status === 409 && errorCode(committed) === 'reservation_not_active') continue;
    if (committed.status !== 200) throw new Error(`commit: ${committed.status} ${committed.text.slice(0, 300)}`);
    log.commit.push(committed.ms);
    log.reservation.push(performance.now() - started);
  }
}

/** One client: a sale adjustment of 1 unit, again and again, until one is refused for insufficient stock. */
async function adjustUntilEmpty(client: GatewayClient, target: Target, log: ClientLog): Promise<void> {
  for (;;) {
    const answer = await post(client, log, 'adjust', `/warehouse/v1/items/${target.itemId}/stock-adjustments`, {
      delta: -1,
      reason: 'sale',
      location_id: target.locationId,
    });
    if (isEmpty(answer)) return;
    if (answer.status !== 201) throw new Error(`adjust: ${answer.status} ${answer.text.slice(0, 300)}`);
    log.adjust.push(answer.ms);
  }
}

async function stockedItem(client: GatewayClient, locationId: string, name: string, stock: number): Promise<Target> {
  const item = JSON.parse((await client.expect(201, 'POST', '/warehouse/v1/items', { sku: name, name, location_id: locationId })).text) as { id: string };
  await client.expect(201, 'POST', `/warehouse/v1/items/${item.id}/stock-adjustments`, { delta: stock, reason: 'receipt', location_id: locationId });
  return { itemId: item.id, locationId };
}

/** Every committed reservation of the item through the API, all pages: the units they took. */
async function committedUnits(client: GatewayClient, itemId: string): Promise<number> {
  let units = 0;
  let cursor: string | null = null;
  do {
    const query: string = `status=committed&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = JSON.parse((await client.expect(200, 'GET', `/warehouse/v1/items/${itemId}/reservations?${query}`)).text) as {
      data: { quantity: number }[];
      next_cursor: string | null;
    };
    units += page.data.reduce((sum, r) => sum + r.quantity, 0);
    cursor = page.next_cursor;
  } while (cursor);
  return units;
}

/**
 * After a run: the units that left the level, from the API (committed reservations; the item's
 * stock) and from the warehouse database (the sale adjustments written, the level's row), never
 * from the clients' own counts; oversold is what left beyond the stock by either count.
 */
async function audit(ctx: BenchContext, client: GatewayClient, target: Target, variant: Variant, stock: number) {
  const levels = JSON.parse((await client.expect(200, 'GET', `/warehouse/v1/items/${target.itemId}/stock`)).text) as {
    quantity: number;
    levels: { location_id: string | null; on_hand: number; reserved: number }[];
  };
  const level = levels.levels.find((l) => l.location_id === target.locationId) ?? { on_hand: 0, reserved: 0 };
  const { rows } = await ctx.db.warehouse.query<{ sold: number; on_hand: number; reserved: number }>(
    `SELECT (SELECT coalesce(-sum(delta), 0)::int FROM stock_adjustments WHERE item_id = $1 AND reason = 'sale') AS sold,
            l.on_hand, l.reserved
       FROM stock_levels l WHERE l.item_id = $1 AND l.location_id = $2`,
    [target.itemId, target.locationId],
  );
  const db = rows[0]!;
  const counts = [db.sold, stock - level.on_hand, stock - db.on_hand, stock - levels.quantity];
  if (variant === 'reserve') counts.push(await committedUnits(client, target.itemId));
  const unitsOut = Math.max(...counts);
  if (new Set(counts).size !== 1) ctx.log(`  counts disagree (${variant}): ${JSON.stringify(counts)}`);
  return { unitsOut, oversold: Math.max(0, unitsOut - stock), left: { onHand: db.on_hand, reserved: db.reserved } };
}

async function runVariant(
  ctx: BenchContext,
  clients: GatewayClient[],
  setup: GatewayClient,
  locationId: string,
  plan: HotItemPlan,
  variant: Variant,
  round: number,
  logs: Record<Variant, ClientLog>,
): Promise<HotItemRun> {
  const target = await stockedItem(setup, locationId, `hot-${variant}-${round}-${Date.now()}`, plan.stock);
  const log: ClientLog = { statuses: {}, reserve: [], commit: [], reservation: [], adjust: [], other: 0 };
  const drain = variant === 'reserve' ? reserveUntilEmpty : adjustUntilEmpty;
  const started = performance.now();
  await Promise.all(Array.from({ length: plan.clients }, (_, i) => drain(clients[i % clients.length]!, target, log)));
  const seconds = (performance.now() - started) / 1000;
  const { unitsOut, oversold, left } = await audit(ctx, setup, target, variant, plan.stock);
  if (round > 0) for (const kind of ['reserve', 'commit', 'reservation', 'adjust'] as const) logs[variant][kind].push(...log[kind]);
  return { round, variant, seconds, unitsOut, unitsPerSecond: unitsOut / seconds, oversold, left, statuses: log.statuses, retried: log.other };
}

const percentiles = (values: number[]) => {
  const sorted = Float64Array.from(values).sort();
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
};

/**
 * A hot item (contract section 18: no level is ever oversold under any concurrency): `clients`
 * clients reserve one unit and commit it through the gateway, on one level, until it is empty; the
 * same clients on a second item of the same stock take one unit per stock adjustment (`delta: -1`,
 * `sale`, the path that existed before reservations). Paired rounds alternate the order; round 0 is
 * a warm-up. Units out and oversold come from the API and the database after each run.
 */
export async function hotItemCase(ctx: BenchContext, plan: HotItemPlan): Promise<HotItemResults> {
  const { workspaceId } = await benchWorkspace(ctx, 'bench hot item');
  const tokens: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const key = await adminCall<{ token: string }>(ctx, 'POST', `/workspaces/${workspaceId}/api-keys`, {
      name: `bench hot item ${i}`,
      rate_limits: { warehouse: KEY_LIMIT },
    });
    tokens.push(key.token);
  }
  const clients = tokens.map((token) => new GatewayClient(ctx.platform.gatewayUrl, token));
  const setup = clients[0]!;
  try {
    const location = JSON.parse((await setup.expect(201, 'POST', '/warehouse/v1/locations', { name: 'Hot shelf', code: 'HOT' })).text) as { id: string };
    const logs: Record<Variant, ClientLog> = {
      reserve: { statuses: {}, reserve: [], commit: [], reservation: [], adjust: [], other: 0 },
      adjust: { statuses: {}, reserve: [], commit: [], reservation: [], adjust: [], other: 0 },
    };
    const runs: HotItemRun[] = [];
    for (let round = 0; round <= plan.rounds; round++) {
      const order: Variant[] = round % 2 ? ['adjust', 'reserve'] : ['reserve', 'adjust'];
      const roundPlan = round === 0 ? { ...plan, stock: Math.min(plan.stock, 200) } : plan;
      for (const variant of order) runs.push(await runVariant(ctx, clients, setup, location.id, roundPlan, variant, round, logs));
      const [a, b] = [runs.at(-2)!, runs.at(-1)!];
      ctx.log(
        `  ${round === 0 ? 'warm-up' : `round ${round}`}: ${a.variant} ${a.unitsPerSecond.toFixed(0)}/s, ${b.variant} ${b.unitsPerSecond.toFixed(0)}/s; oversold ${a.oversold + b.oversold}`,
      );
    }
    const measured = runs.filter((r) => r.round > 0);
    const rate = (variant: Variant) => measured.filter((r) => r.variant === variant).map((r) => r.unitsPerSecond);
    const reserveRates = rate('reserve');
    const adjustRates = rate('adjust');
    return {
      stock: plan.stock,
      clients: plan.clients,
      runs,
      reservationsPerSecond: spread(reserveRates),
      adjustmentsPerSecond: spread(adjustRates),
      reserveOverAdjust: spread(reserveRates.map((v, i) => v / adjustRates[i]!)),
      latencyMs: {
        reserve: percentiles(logs.reserve.reserve),
        commit: percentiles(logs.reserve.commit),
        reservation: percentiles(logs.reserve.reservation),
        adjust: percentiles(logs.adjust.adjust),
      },
      // Every run counts, the warm-up too: an oversold level is never noise.
      oversold: runs.reduce((sum, r) => sum + r.oversold, 0),
      notEmptied: runs.filter((r) => r.left.onHand > r.left.reserved).length,
      leftReserved: runs.reduce((sum, r) => sum + r.left.reserved, 0),
      retried: runs.reduce((sum, r) => sum + r.retried, 0),
    };
  } finally {
    for (const client of clients) client.close();
  }
}
