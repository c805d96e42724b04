import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { BUCKET_LIMITS } from '@platform/core';
import type { BenchContext } from '../context';
import { adminCall, inParallel } from '../context';
import { runLoad, type LoadRequest } from '../load';
import { cpuTimeMs } from '../proc';
import { round, sleep } from '../stats';
import { BENCH_EVENTS_LIMIT, moreTickets } from './proxy';

/**
 * What one request of each route family costs the platform, counted rather than estimated: CPU
 * of each process (/proc), Redis commands (INFO commandstats of the whole server, background
 * work of the window included), database transactions per database (pg_stat_database), and the
 * connections each process holds. The "Past one machine" page turns these into a sizing table:
 * cores, Redis ops/s and PgBouncer pool size for a request rate.
 */

export interface SizingPlan {
  /** Requests per family (runs: pipelines triggered once each). */
  requests: number;
  connections: number;
}

export interface FamilyCost {
  family: string;
  requests: number;
  ok: number;
  /** CPU µs per request of each process that did work for it (gateway, the service, the worker). */
  cpuUsPerRequest: Record<string, number>;
  redisCommandsPerRequest: number;
  /** Per request, by command. */
  redisCommandNames: Record<string, number>;
  /** Transactions per request on each database. */
  dbTransactionsPerRequest: Record<string, number>;
}

export interface SizingResults {
  families: FamilyCost[];
  /** Open connections per process: to PostgreSQL and to Redis (ss -tnp). */
  connections: Record<string, { postgres: number; redis: number }>;
}

interface Family {
  name: string;
  /** Requests a family may send in one minute: its rate-limit bucket's limit, less the setup's calls. */
  maxRequests: number;
  /** Makes what the requests need; returns the next request each time it is called. */
  prepare(ctx: BenchContext, count: number): Promise<() => LoadRequest>;
  /** Resolves once the work the requests started is done (runs: every run ended). */
  settle?(ctx: BenchContext): Promise<void>;
}

const json = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra });

async function gatewayPost<T>(ctx: BenchContext, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${ctx.platform.gatewayUrl}${path}`, { method: 'POST', headers: json(ctx.platform.token), body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

const FAMILIES: Family[] = [
  {
    name: 'events read (GET /events/{id})',
    maxRequests: BENCH_EVENTS_LIMIT - 10,
    async prepare(ctx) {
      const event = await gatewayPost<{ id: string }>(ctx, '/events/v0/events', { name: 'Sizing', starts_at: new Date(Date.now() + 86_400_000).toISOString() });
      return () => ({ method: 'GET', path: `/events/v0/events/${event.id}`, headers: { authorization: `Bearer ${ctx.platform.token}` } });
    },
  },
  {
    name: 'ticket validation (POST /tickets/{id}/validate)',
    maxRequests: BENCH_EVENTS_LIMIT - 10,
    async prepare(ctx, count) {
      const tickets = await moreTickets(ctx, count);
      let i = 0;
      return () => ({
        method: 'POST',
        path: `/events/v0/tickets/${tickets[i++ % tickets.length]}/validate`,
        headers: json(ctx.platform.token),
        body: '{"gate":"main-entrance"}',
      });
    },
  },
  {
    name: 'idempotent create (POST /events with Idempotency-Key)',
    maxRequests: BENCH_EVENTS_LIMIT - 10,
    async prepare(ctx) {
      const body = JSON.stringify({ name: 'Sizing', starts_at: new Date(Date.now() + 86_400_000).toISOString() });
      return () => ({ method: 'POST', path: '/events/v0/events', headers: json(ctx.platform.token, { 'idempotency-key': randomUUID() }), body });
    },
  },
  {
    name: 'stock adjustment (POST /items/{id}/stock-adjustments)',
    maxRequests: BUCKET_LIMITS.warehouse - 10,
    async prepare(ctx) {
      const item = await gatewayPost<{ id: string }>(ctx, '/warehouse/v1/items', { sku: `SIZING-${randomUUID().slice(0, 8)}`, name: 'Sizing' });
      return () => ({
        method: 'POST',
        path: `/warehouse/v1/items/${item.id}/stock-adjustments`,
        headers: json(ctx.platform.token),
        body: '{"delta":1,"reason":"receipt"}',
      });
    },
  },
  {
    name: 'run trigger and its run (POST /pipelines/{id}/runs, 100 records)',
    maxRequests: BUCKET_LIMITS['pipeline-runs'] - 10,
    async prepare(ctx, count) {
      const pipelines = await inParallel(Array.from({ length: count }), 8, (_, i) =>
        gatewayPost<{ id: string }>(ctx, '/pipelines/v3/pipelines', {
          name: `Sizing ${i}`,
          source: { connector: 'sample', config: { records: 100, seed: i } },
          destination: { connector: 'postgres', config: { table: 'sizing_records' } },
        }),
      );
      let i = 0;
      return () => ({
        method: 'POST',
        path: `/pipelines/v3/pipelines/${pipelines[i++ % pipelines.length]!.id}/runs`,
        headers: json(ctx.platform.token),
        body: '{"trigger":"manual"}',
      });
    },
    async settle(ctx) {
      const deadline = Date.now() + 600_000;
      for (;;) {
        const { rows } = await ctx.db.pipelines.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE status IN ('queued', 'running')`);
        if (Number(rows[0]!.n) === 0) return;
        if (Date.now() > deadline) throw new Error('runs did not end within 10 minutes');
        await sleep(500);
      }
    },
  },
];

async function commandstats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const out: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[match[1]!] = Number(match[2]);
  return out;
}

async function transactions(ctx: BenchContext, databases: Record<string, string>): Promise<Record<string, number>> {
  await ctx.db.admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await ctx.db.admin.query<{ datname: string; n: string }>(
    'SELECT datname, xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = ANY($1)',
    [Object.values(databases)],
  );
  const byName = new Map(rows.map((r) => [r.datname, Number(r.n)]));
  return Object.fromEntries(Object.entries(databases).map(([deployable, datname]) => [deployable, byName.get(datname) ?? Number.NaN]));
}

/** Established TCP connections from each process to a port (ss -tnp: the owning pid of each socket). */
function connectionsTo(port: number, pids: Map<number, string>): Record<string, number> {
  const out: Record<string, number> = {};
  let text: string;
  try {
    text = execFileSync('ss', ['-tnpH', 'state', 'established', 'dst', `127.0.0.1:${port}`], { encoding: 'utf8' });
  } catch {
    return out;
  }
  for (const match of text.matchAll(/pid=(\d+)/g)) {
    const name = pids.get(Number(match[1]));
    if (name) out[name] = (out[name] ?? 0) + 1;
  }
  return out;
}

/** What the platform does with no request at all (pollers, queue housekeeping, flushes), per second. */
interface Background {
  cpuMsPerS: Map<string, number>;
  redisPerS: Record<string, number>;
  txPerS: Record<string, number>;
}

interface Counters {
  at: number;
  cpu: Map<string, number>;
  redis: Record<string, number>;
  tx: Record<string, number>;
}

export async function sizingCase(ctx: BenchContext, plan: SizingPlan): Promise<SizingResults> {
  const { platform } = ctx;
  const processes = platform.processes().filter((p) => p.pid !== undefined);
  const redis = new Redis(platform.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const databases = Object.fromEntries(Object.entries(platform.databaseUrls).map(([deployable, url]) => [deployable, new URL(url).pathname.slice(1)]));
  const families: FamilyCost[] = [];
  const counters = async (): Promise<Counters> => ({
    at: Date.now(),
    cpu: new Map(processes.map((p) => [p.name, cpuTimeMs(p.pid)])),
    redis: await commandstats(redis),
    tx: await transactions(ctx, databases),
  });
  const perSecond = (after: number, before: number, ms: number) => ((after - before) * 1000) / ms;
  try {
    // PostgreSQL publishes a backend's counters when it goes idle, at most once a second: every window is waited out by 1.5 s.
    await sleep(1_500);
    const idleStart = await counters();
    await sleep(10_000);
    const idleEnd = await counters();
    const idleMs = idleEnd.at - idleStart.at;
    const background: Background = {
      cpuMsPerS: new Map(processes.map((p) => [p.name, perSecond(idleEnd.cpu.get(p.name)!, idleStart.cpu.get(p.name)!, idleMs)])),
      redisPerS: Object.fromEntries(Object.entries(idleEnd.redis).map(([name, calls]) => [name, perSecond(calls, idleStart.redis[name] ?? 0, idleMs)])),
      txPerS: Object.fromEntries(Object.keys(databases).map((d) => [d, perSecond(idleEnd.tx[d]!, idleStart.tx[d]!, idleMs)])),
    };
    for (const family of FAMILIES) {
      const count = Math.min(plan.requests, family.maxRequests);
      ctx.log(`sizing: ${family.name}, ${count} requests`);
      const next = await family.prepare(ctx, count);
      await sleep(1_500);
      const before = await counters();
      const result = await runLoad({ url: platform.gatewayUrl, connections: plan.connections, amount: count, next });
      await family.settle?.(ctx);
      await sleep(1_500);
      const after = await counters();
      const windowS = (after.at - before.at) / 1000;
      const requests = result.ok + result.non2xx;
      // Each figure is the window's count less what the platform did idle in as long a window.
      const net = (delta: number, backgroundPerS: number) => Math.max(0, delta - backgroundPerS * windowS) / requests;
      const cpuUsPerRequest: Record<string, number> = {};
      for (const p of processes) {
        const used = net(after.cpu.get(p.name)! - before.cpu.get(p.name)!, background.cpuMsPerS.get(p.name)!) * 1000;
        if (used >= 1) cpuUsPerRequest[p.name] = round(used, 0);
      }
      const names: Record<string, number> = {};
      let commands = 0;
      for (const [name, calls] of Object.entries(after.redis)) {
        if (name === 'info') continue;
        const perRequest = net(calls - (before.redis[name] ?? 0), background.redisPerS[name] ?? 0);
        if (perRequest < 0.005) continue;
        names[name] = round(perRequest, 2);
        commands += perRequest;
      }
      const dbTransactionsPerRequest = Object.fromEntries(
        Object.keys(databases)
          .map((d) => [d, round(net(after.tx[d]! - before.tx[d]!, background.txPerS[d]!), 2)] as const)
          .filter(([, n]) => n >= 0.01),
      );
      families.push({
        family: family.name,
        requests,
        ok: result.ok,
        cpuUsPerRequest,
        redisCommandsPerRequest: round(commands, 2),
        redisCommandNames: names,
        dbTransactionsPerRequest,
      });
    }
    const pids = new Map(processes.map((p) => [p.pid!, p.name]));
    const postgres = connectionsTo(5432, pids);
    const redisPort = Number(new URL(platform.redisUrl).port || 6379);
    const toRedis = connectionsTo(redisPort, pids);
    const connections = Object.fromEntries(processes.map((p) => [p.name, { postgres: postgres[p.name] ?? 0, redis: toRedis[p.name] ?? 0 }]));
    // The admin API answers too: the seeded key is still valid (a sanity check that nothing above broke the platform).
    await adminCall(ctx, 'GET', `/workspaces/${platform.workspaceId}/api-keys/${platform.keyId}`);
    return { families, connections };
  } finally {
    redis.disconnect();
  }
}
