import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from '@platform/testing';
import { signed, type BenchContext } from '../context';
import { runLoad, type LoadRequest, type LoadResult } from '../load';
import { cpuTimeMs, spawnNode, type ExtraProcess } from '../proc';
import { monotonicUs, newestProfile, summarizeProfile, type ProfileSummary } from '../profile';
import { median, sleep } from '../stats';

export type Variant = 'direct' | 'gateway' | 'passthrough' | 'bare' | 'express';
/** The separately started comparison proxies. */
export type ExtraVariant = 'passthrough' | 'bare' | 'express';

export interface ProxyRun extends LoadResult {
  variant: string;
  round: number;
  /** CPU of the proxy process (gateway, pass-through, bare or Express variant) per 2xx answer, µs; NaN for direct. */
  proxyCpuUsPerRequest: number;
  /** CPU of the events service per 2xx answer, µs. */
  serviceCpuUsPerRequest: number;
}

export interface ProxySummary {
  connections: number;
  variant: Exclude<Variant, 'direct'>;
  /** Medians over the rounds. */
  rps: number;
  directRps: number;
  ratio: number;
  addedP50Ms: number;
  addedP99Ms: number;
  p50Ms: number;
  p99Ms: number;
  directP50Ms: number;
  directP99Ms: number;
  proxyCpuUsPerRequest: number;
}

export interface ProxyResults {
  ticketsCreated: number;
  ticketsUsed: number;
  runs: ProxyRun[];
  summary: ProxySummary[];
  profiles: Partial<Record<Exclude<Variant, 'direct'>, ProfileSummary & { requests: number; cpuUsPerRequest: number }>>;
}

export interface ProxyPlan {
  rounds: number;
  connections: number[];
  durationS: Record<number, number>;
  tickets: number;
  profileS: number;
}

const VALIDATE_BODY = JSON.stringify({ gate: 'main-entrance' });

/** Every request validates a ticket that was never validated (one UPDATE + one outbox row in the service). */
async function createTickets(ctx: BenchContext, count: number): Promise<string[]> {
  const { workspaceId } = ctx.identity;
  const event = await ctx.db.events.query<{ id: string }>(
    `INSERT INTO events (id, workspace_id, name, starts_at) VALUES (gen_random_uuid(), $1, 'Bench concert', now() + interval '1 day') RETURNING id`,
    [workspaceId],
  );
  const eventId = event.rows[0]!.id;
  const tickets = await ctx.db.events.query<{ id: string }>(
    `INSERT INTO tickets (id, workspace_id, event_id, holder_name) SELECT gen_random_uuid(), $1, $2, 'Bench guest ' || i FROM generate_series(1, $3) AS i RETURNING id`,
    [workspaceId, eventId, count],
  );
  return tickets.rows.map((r) => r.id);
}

/** Fresh tickets, one per request; throws when the plan made too few. */
export async function ticketSupply(ctx: BenchContext, count: number): Promise<{ created: number; used(): number; next(): string }> {
  ctx.log(`creating ${count} tickets`);
  const tickets = await createTickets(ctx, count);
  let used = 0;
  return {
    created: tickets.length,
    used: () => used,
    next: () => {
      if (used >= tickets.length) throw new Error("ran out of fresh tickets: raise the plan's ticket count");
      return tickets[used++]!;
    },
  };
}

/** A ticket validation as a client sends it to a gateway. */
export function validateViaGateway(token: string, ticketId: string): LoadRequest {
  return {
    method: 'POST',
    path: `/events/v0/tickets/${ticketId}/validate`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: VALIDATE_BODY,
  };
}

/** The same validation signed for the events service itself: a direct call, or one the pass-through forwards as it came. */
export function validateSigned(ctx: BenchContext, ticketId: string): LoadRequest {
  const path = `/tickets/${ticketId}/validate`;
  return { method: 'POST', path, headers: { ...signed(ctx, 'events', 'POST', path, VALIDATE_BODY), 'content-type': 'application/json' }, body: VALIDATE_BODY };
}

/** The pid of a platform process, by name. */
export const processPid = (ctx: BenchContext, name: string): number | undefined => ctx.platform.processes().find((p) => p.name === name)?.pid;

export interface LoadTarget {
  url: string;
  /** The proxy process whose CPU is measured (none for a direct call). */
  pid: number | undefined;
  next: () => LoadRequest;
}

export type Measure<V extends string> = (variant: V, connections: number, durationS: number, round: number) => Promise<ProxyRun & { variant: V }>;

/** One closed-loop run against a variant, with the CPU its proxy and the events service spent per 2xx answer. */
export function measurer<V extends string>(ctx: BenchContext, target: (variant: V) => LoadTarget): Measure<V> {
  return async (variant, connections, durationS, round) => {
    const { url, pid, next } = target(variant);
    const proxyBefore = cpuTimeMs(pid);
    const serviceBefore = cpuTimeMs(processPid(ctx, 'events'));
    const result = await runLoad({ url, connections, durationS, next });
    const proxyCpu = cpuTimeMs(pid) - proxyBefore;
    const serviceCpu = cpuTimeMs(processPid(ctx, 'events')) - serviceBefore;
    if (result.non2xx > 0 || result.errors > 0)
      ctx.log(`  ${variant} c=${connections}: ${result.non2xx} non-2xx ${JSON.stringify(result.statusCounts)}, ${result.errors} errors`);
    return { ...result, variant, round, proxyCpuUsPerRequest: (proxyCpu * 1000) / result.ok, serviceCpuUsPerRequest: (serviceCpu * 1000) / result.ok };
  };
}

/**
 * A warm-up of every variant, then `plan.rounds` rounds: at each connection count every variant
 * once, the order rotating every round so no variant always runs right after another.
 */
export async function interleavedRounds<V extends string, R extends ProxyRun>(
  ctx: BenchContext,
  measure: (variant: V, connections: number, durationS: number, round: number) => Promise<R>,
  order: V[],
  plan: Pick<ProxyPlan, 'rounds' | 'connections' | 'durationS'>,
): Promise<R[]> {
  ctx.log('warm-up');
  for (const variant of order) await measure(variant, 10, 2, 0);
  const runs: R[] = [];
  for (let round = 1; round <= plan.rounds; round++) {
    for (const connections of plan.connections) {
      const rotated = order.map((_, i) => order[(i + round - 1) % order.length]!);
      for (const variant of rotated) {
        const run = await measure(variant, connections, plan.durationS[connections]!, round);
        runs.push(run);
        ctx.log(
          `  round ${round} c=${connections} ${variant.padEnd(15)} ${run.rps.toFixed(0).padStart(6)} req/s  p50 ${run.p50.toFixed(2)} ms  p99 ${run.p99.toFixed(2)} ms  proxy cpu ${Number.isFinite(run.proxyCpuUsPerRequest) ? run.proxyCpuUsPerRequest.toFixed(0) + ' µs/req' : '-'}`,
        );
        await sleep(300);
      }
    }
  }
  return runs;
}

/** A comparison proxy (pass-through, bare node:http + undici, Express + http-proxy-middleware), as a process of its own. */
export async function startVariant(ctx: BenchContext, variant: ExtraVariant, nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<ExtraProcess> {
  const [port] = (await freePorts(1)) as [number];
  const { platform } = ctx;
  return spawnNode(
    join(__dirname, '..', `${variant}-gateway.js`),
    nodeArgs,
    {
      VARIANT_PORT: String(port),
      GATEWAY_DATABASE_URL: platform.databaseUrls.gateway,
      REDIS_URL: platform.redisUrl,
      PLATFORM_INTERNAL_SECRET: platform.internalSecret,
      EVENTS_URL: platform.serviceUrls.events,
      WAREHOUSE_URL: platform.serviceUrls.warehouse,
      PIPELINES_URL: platform.serviceUrls.pipelines,
      EVENTS_RATE_LIMIT: String(BENCH_EVENTS_LIMIT),
      LOG_LEVEL: 'warn',
      ...env,
    },
    port,
  );
}

/** The bench gateways' events limit: high enough that the throughput runs never meet it (the limiter still runs). */
export const BENCH_EVENTS_LIMIT = 100_000_000;

/**
 * Ticket validation straight to the events service, through the gateway, through a node:http +
 * undici pass-through that does nothing but forward (the floor of any node proxy), through a bare
 * node:http + undici proxy doing the gateway's steps with one Redis call per request (the issue's
 * reference design), and through the Express + http-proxy-middleware variant: interleaved per
 * round (the order rotates), at each connection count; then a CPU profile of the gateway, the
 * pass-through, bare and Express proxies under the highest connection count.
 */
export async function proxyCase(ctx: BenchContext, plan: ProxyPlan): Promise<ProxyResults> {
  const { platform, log } = ctx;
  const tickets = await ticketSupply(ctx, plan.tickets);
  const nextTicket = tickets.next;

  const extras: Record<ExtraVariant, ExtraProcess> = {
    passthrough: await startVariant(ctx, 'passthrough'),
    bare: await startVariant(ctx, 'bare'),
    express: await startVariant(ctx, 'express'),
  };
  try {
    const viaProxy = (variant: Exclude<Variant, 'direct'>) => ({
      get url() {
        return variant === 'gateway' ? platform.gatewayUrl : extras[variant].url;
      },
      next: () => validateViaGateway(platform.token, nextTicket()),
    });
    const signedForService = () => validateSigned(ctx, nextTicket());
    const targets: Record<Variant, { url: string; next: () => LoadRequest }> = {
      direct: { url: platform.serviceUrls.events, next: signedForService },
      passthrough: {
        get url() {
          return extras.passthrough.url;
        },
        next: signedForService,
      },
      gateway: viaProxy('gateway'),
      bare: viaProxy('bare'),
      express: viaProxy('express'),
    };
    const proxyPid = (variant: Variant) => (variant === 'gateway' ? processPid(ctx, 'gateway') : variant === 'direct' ? undefined : extras[variant].child.pid);

    const measure = measurer(ctx, (variant: Variant) => ({ ...targets[variant], pid: proxyPid(variant) }));
    const runs = await interleavedRounds(ctx, measure, ['direct', 'gateway', 'passthrough', 'bare', 'express'], plan);

    const summary: ProxySummary[] = [];
    for (const connections of plan.connections) {
      for (const variant of ['gateway', 'passthrough', 'bare', 'express'] as const) {
        const mine = runs.filter((r) => r.variant === variant && r.connections === connections);
        const direct = runs.filter((r) => r.variant === 'direct' && r.connections === connections);
        // Ratios and differences pair each run with the direct run of the same round.
        const paired = mine.map((r) => ({ r, d: direct.find((d) => d.round === r.round)! }));
        summary.push({
          connections,
          variant,
          rps: median(mine.map((r) => r.rps)),
          directRps: median(direct.map((r) => r.rps)),
          ratio: median(paired.map(({ r, d }) => r.rps / d.rps)),
          addedP50Ms: median(paired.map(({ r, d }) => r.p50 - d.p50)),
          addedP99Ms: median(paired.map(({ r, d }) => r.p99 - d.p99)),
          p50Ms: median(mine.map((r) => r.p50)),
          p99Ms: median(mine.map((r) => r.p99)),
          directP50Ms: median(direct.map((r) => r.p50)),
          directP99Ms: median(direct.map((r) => r.p99)),
          proxyCpuUsPerRequest: median(mine.map((r) => r.proxyCpuUsPerRequest)),
        });
      }
    }

    // CPU profiles: separate runs, since the profiler itself costs time.
    const profiles: ProxyResults['profiles'] = {};
    const connections = Math.max(...plan.connections);
    const gatewayDir = join(ctx.resultsDir, 'profiles', 'gateway');
    rmSync(gatewayDir, { recursive: true, force: true });
    mkdirSync(gatewayDir, { recursive: true });
    log('profiling the gateway');
    await platform.restart('gateway', { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${gatewayDir}`] });
    await measure('gateway', 10, 1, 0);
    const fromUs = monotonicUs();
    const gatewayRun = await measure('gateway', connections, plan.profileS, 0);
    const toUs = monotonicUs();
    await platform.restart('gateway', { nodeArgs: [] });
    const gatewayProfile = newestProfile(gatewayDir);
    if (gatewayProfile)
      profiles.gateway = { ...summarizeProfile(gatewayProfile, { fromUs, toUs }), requests: gatewayRun.ok, cpuUsPerRequest: gatewayRun.proxyCpuUsPerRequest };

    for (const variant of ['passthrough', 'bare', 'express'] as const) {
      const dir = join(ctx.resultsDir, 'profiles', variant);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      log(`profiling the ${variant} variant`);
      await extras[variant].stop();
      extras[variant] = await startVariant(ctx, variant, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      await measure(variant, 10, 1, 0);
      const fromUs = monotonicUs();
      const run = await measure(variant, connections, plan.profileS, 0);
      const toUs = monotonicUs();
      await extras[variant].stop();
      const file = newestProfile(dir);
      if (file) profiles[variant] = { ...summarizeProfile(file, { fromUs, toUs }), requests: run.ok, cpuUsPerRequest: run.proxyCpuUsPerRequest };
    }

    return { ticketsCreated: tickets.created, ticketsUsed: tickets.used(), runs, summary, profiles };
  } finally {
    await Promise.all(Object.values(extras).map((e) => e.stop()));
  }
}

/** Fresh tickets for another case (the hot-path count), from the same pool logic. */
export async function moreTickets(ctx: BenchContext, count: number): Promise<string[]> {
  return createTickets(ctx, count);
}
