/**
 * `npm run bench` (root): starts a platform of its own (dedicated databases, a throwaway
 * redis-server on a free port, every process on 127.0.0.1), runs each case, prints a table of
 * medians with the targets beside them, and writes results/latest.json (git-ignored; a --quick or
 * --only run writes latest-quick.* or latest-only-<cases>.* instead).
 * `--quick` runs a short version of every case, to try the harness.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { MAX_QUOTA_VALUE } from '@platform/core';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '@platform/gateway/dist/redis';
import { startPlatform, startRedisServer, type Platform, type RedisServer } from '@platform/testing';
import { checkinCase, type CheckinPlan } from './cases/checkin';
import { cronListCase, type CronListPlan } from './cases/cron-list';
import { fairRunsCase, type FairRunsPlan } from './cases/fair-runs';
import { fleetCase, type FleetPlan } from './cases/fleet';
import { gatewayAbCase } from './cases/gateway-ab';
import { hotItemCase, type HotItemPlan } from './cases/hot-item';
import { hotPathCase } from './cases/hot-path';
import { BEFORE_KEY_LIMITS_REF, keysAbCase } from './cases/keys-ab';
import { BEFORE_TRACING_REF, tracingAbCase } from './cases/tracing-ab';
import { BENCH_EVENTS_LIMIT, proxyCase, type ProxyPlan } from './cases/proxy';
import { rateLimitCase } from './cases/rate-limit';
import { runLineCase, type RunLinePlan } from './cases/run-line';
import { runsCase, type RunsPlan } from './cases/runs';
import { schedulesCase, type SchedulesPlan } from './cases/schedules';
import { sizingCase, type SizingPlan } from './cases/sizing';
import type { BenchContext } from './context';
import { buildOfRef } from './ref-build';
import { markdownTable, tableRows, textTable, type BenchResults } from './report';

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const runCase = (name: string) => !only || only.includes(name);
const argument = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

const WORKER_CONCURRENCY = 4; // the worker's default (WORKER_CONCURRENCY)

const proxyPlan: ProxyPlan = quick
  ? { rounds: 1, connections: [1, 50], durationS: { 1: 1, 50: 1 }, tickets: 30_000, profileS: 1 }
  : { rounds: 6, connections: [1, 50], durationS: { 1: 3, 50: 4 }, tickets: 400_000, profileS: 4 };
// A/B of a gateway setting (--only=gateway-ab --b-env=NAME=value,...): at least 10 interleaved rounds.
const abPlan = quick
  ? { rounds: 2, connections: [1, 50], durationS: { 1: 1, 50: 1 }, tickets: 30_000 }
  : { rounds: Number(argument('rounds') ?? 10), connections: [1, 50], durationS: { 1: 3, 50: 4 }, tickets: 300_000 };
// keys-ab runs a second A as well: five variants a round instead of four (at most ~20,000 tickets a round on the README's machine).
const keysAbPlan = { ...abPlan, tickets: quick ? 40_000 : 40_000 * abPlan.rounds };
const bEnv = Object.fromEntries(
  (argument('b-env')?.split(',') ?? []).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
// Gateway A from another commit's build (gateway-ab when given; keys-ab: the gateway before per-key limits by default).
const aRef = only?.includes('keys-ab')
  ? (argument('a-ref') ?? BEFORE_KEY_LIMITS_REF)
  : only?.includes('tracing-ab')
    ? (argument('a-ref') ?? BEFORE_TRACING_REF)
    : only?.includes('gateway-ab')
      ? argument('a-ref')
      : undefined;
const runsPlan: RunsPlan = quick
  ? { latencySamples: 20, latencyGapMs: 50, runsPerRound: 50, rounds: 1, records: 100 }
  : { latencySamples: 150, latencyGapMs: 40, runsPerRound: 300, rounds: 3, records: 100 };
// Contract section 19: 200 triggers in 10 s on one pipeline with concurrency_policy "enqueue".
const runLinePlan: RunLinePlan = quick ? { triggers: 40, spreadS: 2, records: 10 } : { triggers: 200, spreadS: 10, records: 10 };
const schedulesPlan: SchedulesPlan = quick
  ? { pipelines: 50, everySeconds: 1, windowS: 10, records: 10 }
  : { pipelines: 1_000, everySeconds: 1, windowS: 60, records: 10 };
const fairRunsPlan: FairRunsPlan = quick
  ? { pipelines: 1_000, records: 100, rounds: 1, samplesPerPhase: 10, phaseCapS: 40, warmUpS: 3 }
  : { pipelines: 1_000, records: 100, rounds: Number(argument('rounds') ?? 3), samplesPerPhase: 30, phaseCapS: 60, warmUpS: 3 };
const cronListPlan: CronListPlan = quick ? { rounds: 3, listsPerRound: 20 } : { rounds: Number(argument('rounds') ?? 10), listsPerRound: 40 };
const checkinPlan: CheckinPlan = {
  ...(quick
    ? { tickets: 10_000, uploadClients: 4, changes: 200, loadS: 5, quietSamples: 20 }
    : { tickets: 100_000, uploadClients: 8, changes: 1_000, loadS: 20, quietSamples: 100 }),
  scannedShare: 0.6,
  duplicateShare: 0.05,
  scansPerUpload: 500,
  deltaMarginMs: 1_000,
  onlineScanners: 50,
};
// A second past the window, so requests keep arriving when the first accepted ones leave it.
const rateLimitPlan = { seconds: quick ? 5 : 61, limit: 400, connectionsPerGateway: 10 };
// Past one machine (--only=fleet): a gateway on a Redis Cluster vs on the bench's redis-server, one gateway vs two.
// At least 10 paired rounds; each round uses at most ~35,000 tickets on the README's machine.
const fleetRounds = Number(argument('rounds') ?? (quick ? 2 : 10));
const fleetPlan: FleetPlan = {
  rounds: fleetRounds,
  connections: [1, 50],
  // 1 connection cannot be split over two gateways: part 2 starts at 2.
  splitConnections: [2, 50],
  durationS: quick ? { 1: 1, 2: 1, 50: 1 } : { 1: 3, 2: 3, 50: 4 },
  tickets: (quick ? 20_000 : 40_000) * fleetRounds + 20_000,
  apiKeys: 24,
  exactLimit: quick ? 300 : 500,
  exactS: quick ? 3 : 5,
  exactConnectionsPerGateway: 10,
  idleS: quick ? 3 : 10,
};
// A hot item (contract 18): 50 clients empty one level, by reservations and by adjustments, in paired rounds.
const hotItemPlan: HotItemPlan = quick
  ? { rounds: 2, stock: 300, clients: 50 }
  : { rounds: Number(argument('rounds') ?? 6), stock: Number(argument('stock') ?? 1_000), clients: 50 };
const sizingPlan: SizingPlan = quick ? { requests: 200, connections: 10 } : { requests: 2_000, connections: 10 };

async function machine(ctx: BenchContext, redisUrl: string) {
  const { rows } = await ctx.db.admin.query<{ version: string }>('SELECT version()');
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    node: process.version,
    postgres: /PostgreSQL [\d.]+/.exec(rows[0]!.version)?.[0],
    redis: `Redis ${/redis_version:(\S+)/.exec(info)?.[1]}`,
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const log = (line: string) => process.stdout.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);
  const resultsDir = join(__dirname, '..', 'results');
  mkdirSync(resultsDir, { recursive: true });

  let redis: RedisServer | undefined;
  let platform: Platform | undefined;
  const pools: pg.Pool[] = [];
  // A signal ends the process without running `finally` or 'exit' handlers: Ctrl-C would leave the platform's processes and the redis-server running.
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the platform`);
    void Promise.resolve(platform?.stop())
      .then(() => redis?.stop())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    // Before the platform starts: a build that fails stops the bench at once.
    const aBuild = aRef ? buildOfRef(aRef, log) : undefined;
    redis = await startRedisServer();
    log(`redis-server on ${redis.url}; starting the platform`);
    platform = await startPlatform({
      name: 'bench',
      redisUrl: redis.url,
      processes: ['events', 'warehouse', 'pipelines', { kind: 'worker', env: { WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) } }, 'gateway'],
      // Requests are not logged (warn): the figures are the proxy's, not pino's.
      logLevel: 'warn',
      // Two cores shared with other builds can take longer than the launcher's 30 s to start a process.
      startTimeoutMs: 90_000,
      // Schedules of 1 s (the schedules case); the default minimum is 60 s.
      env: {
        EVENTS_RATE_LIMIT: String(BENCH_EVENTS_LIMIT),
        PIPELINES_SCHEDULE_MIN_INTERVAL_S: '1',
        // Production's Redis command timeout, not the launcher's test value.
        REDIS_COMMAND_TIMEOUT_MS: String(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
      },
    });
    const pool = (url: string) => {
      const p = new pg.Pool({ connectionString: url, max: 4 });
      pools.push(p);
      return p;
    };
    const adminUrl = new URL(platform.databaseUrls.gateway);
    adminUrl.pathname = '/postgres';
    const ctx: BenchContext = {
      platform,
      resultsDir,
      // The cases create thousands of pipelines in this workspace: its quotas raised, as an operator would (contract section 20).
      identity: {
        workspaceId: platform.workspaceId,
        keyId: platform.keyId,
        scopes: null,
        quotas: { pipelines: MAX_QUOTA_VALUE, scheduled_pipelines: MAX_QUOTA_VALUE, webhook_endpoints: MAX_QUOTA_VALUE },
      },
      db: {
        events: pool(platform.databaseUrls.events),
        warehouse: pool(platform.databaseUrls.warehouse),
        pipelines: pool(platform.databaseUrls.pipelines),
        admin: pool(adminUrl.toString()),
      },
      log,
    };
    log(`platform up: gateway ${platform.gatewayUrl}`);

    const results: BenchResults = {};
    // Other work on the machine skews every figure: the 1-minute load average before and after each case.
    const load: Record<string, [number, number]> = {};
    const measured = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      const before = os.loadavg()[0]!;
      const result = await run();
      load[name] = [Math.round(before * 100) / 100, Math.round(os.loadavg()[0]! * 100) / 100];
      log(`${name} done (load average ${load[name][0]} → ${load[name][1]})`);
      return result;
    };
    if (runCase('proxy')) {
      log('case 1: ticket validation, direct vs gateway vs bare node:http + undici vs Express + http-proxy-middleware');
      results.proxy = await measured('proxy', () => proxyCase(ctx, proxyPlan));
    }
    if (only?.includes('gateway-ab')) {
      log(`case A/B: the gateway ${aBuild ? `of ${aRef}` : 'as configured'} vs a second gateway with ${JSON.stringify(bEnv)}`);
      results.ab = await measured('gateway-ab', () => gatewayAbCase(ctx, abPlan, { bEnv, a: aBuild, redisFloor: true }, redis?.pid));
    }
    if (only?.includes('fleet')) {
      // Not in a full run: it starts a Redis Cluster of six nodes and takes minutes of paired rounds.
      log('case fleet: the gateway on a Redis Cluster vs on one redis-server; one gateway vs two');
      results.fleet = await measured('fleet', () => fleetCase(ctx, fleetPlan, redis?.pid));
    }
    if (only?.includes('keys-ab') && aBuild) {
      log(`case keys A/B: the gateway of ${aRef} vs this one with per-key rate_limits and usage counting`);
      results.keysAb = await measured('keys-ab', () => keysAbCase(ctx, keysAbPlan, aBuild, redis?.pid));
    }
    if (only?.includes('tracing-ab') && aBuild) {
      log(`case tracing A/B: the gateway of ${aRef} vs this one with tracing off, then this one with tracing off vs on`);
      results.tracingAb = await measured('tracing-ab', () => tracingAbCase(ctx, keysAbPlan, aBuild, redis?.pid, argument('tracing') === 'on'));
    }
    if (runCase('hot-path')) {
      log('case 2: gateway hot path, counted database and Redis round trips');
      results.hotPath = await measured('hot-path', () => hotPathCase(ctx, quick ? 500 : 2_000));
    }
    if (runCase('runs')) {
      log('case 3: run start latency and runs per minute');
      results.runs = await measured('runs', () => runsCase(ctx, runsPlan, WORKER_CONCURRENCY));
    }
    if (runCase('run-line')) {
      log('case 3b: the pending line: one enqueue pipeline, 200 triggers in 10 s, hand-over from a run end to the next start');
      results.runLine = await measured('run-line', () => runLineCase(ctx, runLinePlan));
    }
    if (runCase('schedules')) {
      log('case 4: schedule ticks of many pipelines');
      results.schedules = await measured('schedules', () => schedulesCase(ctx, schedulesPlan));
    }
    if (runCase('fair-runs')) {
      log("case 4b: fair runs: B's trigger-to-start with and without 1,000 pipelines of A ticking every second");
      results.fairRuns = await measured('fair-runs', () => fairRunsCase(ctx, fairRunsPlan));
    }
    if (runCase('cron-list')) {
      log('case 4c: GET /pipelines?limit=100 of 100 cron pipelines vs 100 unscheduled ones');
      results.cronList = await measured('cron-list', () => cronListCase(ctx, cronListPlan));
    }
    if (runCase('checkin')) {
      log('case 5: check-in: offline uploads, replay, full and delta download, stats under online scanners');
      results.checkin = await measured('checkin', () => checkinCase(ctx, checkinPlan));
    }
    if (runCase('hot-item')) {
      log('case 5b: a hot item: 50 clients reserve and commit on one level until it is empty, against the same load of stock adjustments');
      results.hotItem = await measured('hot-item', () => hotItemCase(ctx, hotItemPlan));
    }
    if (runCase('rate-limit')) {
      log('case 6: rate limit over two gateway instances');
      results.rateLimit = await measured('rate-limit', () => rateLimitCase(ctx, rateLimitPlan));
    }
    if (runCase('sizing')) {
      log('case 7: what one request of each route family costs: CPU per process, Redis commands, transactions, connections');
      results.sizing = await measured('sizing', () => sizingCase(ctx, sizingPlan));
    }

    const rows = tableRows(results);
    const env = await machine(ctx, redis.url);
    const date = new Date().toISOString();
    const report = {
      date,
      quick,
      durationS: Math.round((Date.now() - started) / 1000),
      machine: env,
      loadAverage: load,
      setup: {
        logLevel: 'warn (no per-request log lines)',
        redis: 'a dedicated redis-server started by the bench',
        workerConcurrency: WORKER_CONCURRENCY,
        gatewayEventsLimit: BENCH_EVENTS_LIMIT,
      },
      plans: {
        proxy: proxyPlan,
        ab: abPlan,
        keysAb: keysAbPlan,
        runs: runsPlan,
        runLine: runLinePlan,
        schedules: schedulesPlan,
        fairRuns: fairRunsPlan,
        cronList: cronListPlan,
        checkin: checkinPlan,
        hotItem: hotItemPlan,
        rateLimit: rateLimitPlan,
        sizing: sizingPlan,
        ...(only?.includes('fleet') ? { fleet: fleetPlan } : {}),
      },
      table: rows,
      results,
    };
    // Only a full run replaces latest.*: a --quick or --only run must not overwrite the table the README quotes.
    const resultName = only ? `latest-only-${only.join('-')}` : quick ? 'latest-quick' : 'latest';
    writeFileSync(join(resultsDir, `${resultName}.json`), `${JSON.stringify(report, null, 2)}\n`);
    const loads = Object.values(load).flat();
    const heading =
      `Machine: ${env.cores} cores (${env.cpu}) / Node ${env.node.slice(1)} / ${env.postgres} / ${env.redis}, ${date.slice(0, 10)}${quick ? ' (--quick)' : ''}; ` +
      `1-min load average ${Math.min(...loads)}-${Math.max(...loads)} during the cases`;
    writeFileSync(join(resultsDir, `${resultName}.md`), `${heading}\n\n${markdownTable(rows)}\n`);

    process.stdout.write(`\n${heading}\n\n${textTable(rows)}\n`);
    for (const [name, profile] of Object.entries(results.proxy?.profiles ?? {})) {
      process.stdout.write(`\nCPU profile, ${name} (${profile.requests} requests, ${profile.busyMs.toFixed(0)} ms busy): by area\n`);
      const perRequest = (ms: number) => `${((ms * 1000) / profile.requests).toFixed(0).padStart(4)} µs/req`;
      for (const a of profile.byArea.slice(0, 8)) process.stdout.write(`  ${(a.share * 100).toFixed(1).padStart(5)}%  ${perRequest(a.selfMs)}  ${a.area}\n`);
      process.stdout.write('  top frames (self time)\n');
      for (const f of profile.top.slice(0, 8)) process.stdout.write(`  ${(f.share * 100).toFixed(1).padStart(5)}%  ${perRequest(f.selfMs)}  ${f.frame}\n`);
    }
    process.stdout.write(`\nresults: ${join(resultsDir, `${resultName}.json`)} (table also in ${resultName}.md); ${report.durationS} s\n`);
    if (rows.some((r) => r.verdict === 'MISSED')) process.stdout.write('Some targets were missed: see the MISSED rows.\n');
  } finally {
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    await platform?.stop();
    await redis?.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
