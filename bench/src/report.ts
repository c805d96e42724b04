import type { CheckinResults } from './cases/checkin';
import type { CronListResults } from './cases/cron-list';
import type { FairRunsResults } from './cases/fair-runs';
import type { FleetResults, PairedRatio } from './cases/fleet';
import type { AbResults } from './cases/gateway-ab';
import type { KeysAbResults } from './cases/keys-ab';
import type { TracingAbResults } from './cases/tracing-ab';
import type { HotItemResults } from './cases/hot-item';
import type { HotPathResults } from './cases/hot-path';
import type { ProxyResults } from './cases/proxy';
import type { RateLimitResults } from './cases/rate-limit';
import type { RunLineResults } from './cases/run-line';
import type { RunsResults } from './cases/runs';
import type { SchedulesResults } from './cases/schedules';
import type { SizingResults } from './cases/sizing';
import type { Spread } from './spread';

export interface Row {
  measurement: string;
  measured: string;
  target: string;
  /** met / MISSED for a target, `ref` for a reference figure without a target. */
  verdict: 'met' | 'MISSED' | 'ref' | '';
}

const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const n2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
const ms = (v: number) => `${n2(v)} ms`;
const signedMs = (v: number) => `${v >= 0 ? '+' : ''}${n2(v)} ms`;
const verdict = (ok: boolean): Row['verdict'] => (ok ? 'met' : 'MISSED');

/** What the cases of one bench run measured (a case left out by --only is absent). */
export interface BenchResults {
  proxy?: ProxyResults;
  ab?: AbResults;
  keysAb?: KeysAbResults;
  tracingAb?: TracingAbResults;
  hotPath?: HotPathResults;
  runs?: RunsResults;
  schedules?: SchedulesResults;
  fairRuns?: FairRunsResults;
  runLine?: RunLineResults;
  cronList?: CronListResults;
  checkin?: CheckinResults;
  hotItem?: HotItemResults;
  rateLimit?: RateLimitResults;
  sizing?: SizingResults;
  fleet?: FleetResults;
}

export function tableRows(results: BenchResults): Row[] {
  const rows: Row[] = [];
  const { proxy, ab, keysAb, tracingAb, hotPath, runs, runLine, schedules, fairRuns, cronList, checkin, hotItem, rateLimit, sizing, fleet } = results;
  if (proxy) {
    for (const connections of [...new Set(proxy.summary.map((s) => s.connections))]) {
      const gateway = proxy.summary.find((s) => s.connections === connections && s.variant === 'gateway')!;
      const express = proxy.summary.find((s) => s.connections === connections && s.variant === 'express')!;
      const c = `${connections} conn`;
      rows.push({
        measurement: `Ticket validation, ${c}: direct to the events service`,
        measured: `${n0(gateway.directRps)} req/s, p50 ${ms(gateway.directP50Ms)}, p99 ${ms(gateway.directP99Ms)}`,
        target: '',
        verdict: '',
      });
      rows.push({
        measurement: `Gateway (node:http + undici), ${c}: throughput vs direct`,
        measured: `${n2(gateway.ratio)}x (${n0(gateway.rps)} req/s)`,
        target: '≥ 0.70x',
        verdict: verdict(gateway.ratio >= 0.7),
      });
      rows.push({
        measurement: `Gateway, ${c}: added p50 / p99`,
        measured: `${signedMs(gateway.addedP50Ms)} / ${signedMs(gateway.addedP99Ms)}`,
        target: connections === 1 ? 'p50 ≤ +1 ms' : '',
        verdict: connections === 1 ? verdict(gateway.addedP50Ms <= 1) : '',
      });
      const passthrough = proxy.summary.find((s) => s.connections === connections && s.variant === 'passthrough');
      if (passthrough) {
        rows.push({
          measurement: `node:http + undici pass-through, no steps (bench only), ${c}: throughput vs direct`,
          measured: `${n2(passthrough.ratio)}x (${n0(passthrough.rps)} req/s)`,
          target: 'floor of a node proxy',
          verdict: 'ref',
        });
        rows.push({
          measurement: `Pass-through, ${c}: added p50 / p99`,
          measured: `${signedMs(passthrough.addedP50Ms)} / ${signedMs(passthrough.addedP99Ms)}`,
          target: '',
          verdict: '',
        });
      }
      const bare = proxy.summary.find((s) => s.connections === connections && s.variant === 'bare');
      if (bare) {
        rows.push({
          measurement: `Bare node:http + undici, same steps, one Redis call per request (bench only), ${c}: throughput vs direct`,
          measured: `${n2(bare.ratio)}x (${n0(bare.rps)} req/s)`,
          target: 'reference 0.69x',
          verdict: 'ref',
        });
        rows.push({
          measurement: `Bare node:http + undici, ${c}: added p50 / p99`,
          measured: `${signedMs(bare.addedP50Ms)} / ${signedMs(bare.addedP99Ms)}`,
          target: '',
          verdict: '',
        });
      }
      rows.push({
        measurement: `Express 5 + http-proxy-middleware 4, ${c}: throughput vs direct`,
        measured: `${n2(express.ratio)}x (${n0(express.rps)} req/s)`,
        target: 'reference 0.40x',
        verdict: 'ref',
      });
      rows.push({
        measurement: `Express 5 + http-proxy-middleware 4, ${c}: added p50 / p99`,
        measured: `${signedMs(express.addedP50Ms)} / ${signedMs(express.addedP99Ms)}`,
        target: '',
        verdict: '',
      });
    }
    // CPU per request from /proc (10 ms ticks over a few seconds): compare within a row, not across runs.
    const names = { gateway: 'gateway', passthrough: 'pass-through', bare: 'bare', express: 'Express + h-p-m' } as const;
    for (const connections of [...new Set(proxy.summary.map((s) => s.connections))]) {
      const parts = (Object.keys(names) as (keyof typeof names)[])
        .map((variant) => proxy.summary.find((s) => s.connections === connections && s.variant === variant))
        .filter((s): s is NonNullable<typeof s> => !!s)
        .map((s) => `${names[s.variant]} ${n0(s.proxyCpuUsPerRequest)}`);
      rows.push({
        measurement: `CPU per proxied request, µs, ${connections} conn`,
        measured: parts.join(', '),
        target: 'reference ~220 (undici), ~570 (Express + h-p-m)',
        verdict: 'ref',
      });
    }
  }
  if (ab) {
    const settings = Object.entries(ab.bEnv).map(([k, v]) => `${k}=${v}`);
    rows.push(...abRows(ab, 'A/B', `B (${settings.join(' ') || 'same settings'})`, !ab.a));
  }
  if (tracingAb) {
    if (tracingAb.off) rows.push(...abRows(tracingAb.off, 'Tracing off A/B', 'B (this checkout, tracing off)', false));
    rows.push(...abRows(tracingAb.on, 'Tracing on A/B', 'B (this checkout, tracing on)', false));
    rows.push({
      measurement: 'Tracing on A/B: OTLP exports the traced gateway sent',
      measured: `${n0(tracingAb.on.exports)} (${n0(tracingAb.on.exportedKiB)} KiB of protobuf)`,
      target: '> 0',
      verdict: verdict(tracingAb.on.exports > 0),
    });
  }
  if (keysAb) {
    rows.push(...abRows(keysAb, 'Keys A/B', 'B (this checkout, per-key rate_limits, usage counted)', false));
    const u = keysAb.usage;
    rows.push({
      measurement: `Keys A/B: usage counted for B's key (GET .../usage) vs requests B answered`,
      measured: `${n0(u.requests)} (${Object.entries(u.byStatus)
        .map(([k, v]) => `${k} ${n0(v)}`)
        .join(', ')}) for ${n0(u.bAnswered)} answered`,
      target: `≥ answered, ≤ + ${n0(u.inFlightBound)} in flight`,
      verdict: verdict(u.requests >= u.bAnswered && u.requests <= u.bAnswered + u.inFlightBound),
    });
  }
  if (hotPath) {
    rows.push({
      measurement: `Gateway hot path: database transactions per request (${n0(hotPath.requests)} requests)`,
      measured:
        `${hotPath.dbQueriesPerRequest.toFixed(4)} (${hotPath.gatewayDbTransactions} in ${hotPath.windowS.toFixed(1)} s, all periodic: ` +
        `last_used_at batch every 5 s, key re-read every 30 s; ≤ ${hotPath.periodicQueriesPossible} fit)`,
      target: '0',
      verdict: verdict(hotPath.gatewayDbTransactions <= hotPath.periodicQueriesPossible),
    });
    rows.push({
      measurement: 'Gateway hot path: Redis round trips per request',
      measured: `${hotPath.redisRoundTripsPerRequest.toFixed(2)} (${Object.entries(hotPath.gatewayRedisCommandNames)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
      target: '≤ 1',
      verdict: verdict(hotPath.redisRoundTripsPerRequest <= 1.0005),
    });
  }
  if (runs) {
    rows.push({
      measurement: 'Run start latency: 202 → started_at, p50 / p99',
      measured: `${ms(runs.latency.fromAcceptedP50Ms)} / ${ms(runs.latency.fromAcceptedP99Ms)}`,
      target: 'p50 ≤ 50 ms',
      verdict: verdict(runs.latency.fromAcceptedP50Ms <= 50),
    });
    rows.push({
      measurement: 'Run start latency: created_at → started_at, p50 / p99',
      measured: `${ms(runs.latency.fromCreatedP50Ms)} / ${ms(runs.latency.fromCreatedP99Ms)}`,
      target: '',
      verdict: '',
    });
    rows.push({
      measurement: `Sample runs per minute, 1 worker (concurrency ${runs.workerConcurrency}, ${runs.records} records each)`,
      measured: n0(runs.runsPerMinute['1']!),
      target: '≥ 2,000',
      verdict: verdict(runs.runsPerMinute['1']! >= 2000),
    });
    rows.push({ measurement: 'Sample runs per minute, 2 workers', measured: n0(runs.runsPerMinute['2']!), target: '', verdict: '' });
  }
  if (schedules) {
    const s = schedules;
    rows.push({
      measurement: `Schedule ticks: ${n0(s.pipelines)} pipelines every ${s.everySeconds} s for ${s.windowS} s: runs per tick (most for one tick; ticks off the grid; overlapping runs)`,
      measured: `${s.maxRunsPerTick} (${n0(s.runsCreated)} runs for ${n0(s.ticksDue)} ticks due, ${n0(s.ticksSkippedActive)} skipped while a run was active; ${s.offGridTicks} off the grid; ${s.overlaps} overlaps)`,
      target: '= 1, 0, 0',
      verdict: verdict(s.maxRunsPerTick === 1 && s.offGridTicks === 0 && s.overlaps === 0),
    });
    rows.push({
      measurement: 'Schedule ticks: tick → run created, p50 / p99',
      measured: `${ms(s.tickToCreatedP50Ms)} / ${ms(s.tickToCreatedP99Ms)}`,
      target: '',
      verdict: 'ref',
    });
    rows.push({
      measurement: 'Schedule ticks: tick → started_at, p50 / p99',
      measured: `${ms(s.tickToStartedP50Ms)} / ${ms(s.tickToStartedP99Ms)}`,
      target: '',
      verdict: 'ref',
    });
  }
  if (runLine) rows.push(...runLineRows(runLine));
  if (fairRuns) rows.push(...fairRunsRows(fairRuns));
  if (cronList) {
    const c = cronList;
    rows.push({
      measurement: `GET /pipelines?limit=100: ${c.pipelines} cron pipelines / ${c.pipelines} unscheduled, median latency per round (${c.cronOverPlain.rounds.length} paired rounds; ms: cron, unscheduled); a second unscheduled workspace / the first`,
      measured: `${n2(c.cronOverPlain.median)} (rounds ${n2(c.cronOverPlain.min)}-${n2(c.cronOverPlain.max)}; ${ms(c.medianMs.cron.median)}, ${ms(c.medianMs.plain.median)}); ${n2(c.plainOverPlain.median)} (${n2(c.plainOverPlain.min)}-${n2(c.plainOverPlain.max)})`,
      target: '~1.00, within the spread of the rounds',
      verdict: verdict(c.verdict.within),
    });
  }
  if (checkin) rows.push(...checkinRows(checkin));
  if (hotItem) rows.push(...hotItemRows(hotItem));
  if (rateLimit) {
    rows.push({
      measurement: `Rate limit: accepted in 60 s, one token, ${rateLimit.gateways} gateways under load (${rateLimit.connectionsPerGateway} connections each, ${rateLimit.seconds} s)`,
      measured:
        `${rateLimit.acceptedInFirstWindow} in the window of the first (${rateLimit.accepted} in the whole run: ${rateLimit.acceptedPerGateway.join(' + ')}; ` +
        `${n0(rateLimit.rejected)} got 429; in-memory fallbacks ${rateLimit.degradations.join(' + ')})`,
      target: `= ${rateLimit.limit}`,
      verdict: verdict(rateLimit.acceptedInFirstWindow === rateLimit.limit && Object.keys(rateLimit.otherStatuses).length === 0),
    });
  }
  if (sizing) rows.push(...sizingRows(sizing));
  if (fleet) rows.push(...fleetRows(fleet));
  return rows;
}

/** One row per route family (CPU per process, Redis commands, transactions per database), then the connections each process holds. */
function sizingRows(sizing: SizingResults): Row[] {
  const perProcess = (values: Record<string, number>, unit: string) =>
    Object.entries(values)
      .map(([name, v]) => `${name} ${v}${unit}`)
      .join(', ');
  return [
    ...sizing.families.map((f): Row => ({
      measurement: `Sizing, ${f.family}: per request (${n0(f.requests)} requests, ${n0(f.ok)} 2xx)`,
      measured: `CPU ${perProcess(f.cpuUsPerRequest, ' µs')}; Redis ${n2(f.redisCommandsPerRequest)} commands (scripts' own calls included, ${n2((f.redisCommandNames.evalsha ?? 0) + (f.redisCommandNames.eval ?? 0))} of them script calls); transactions ${perProcess(f.dbTransactionsPerRequest, '')}`,
      target: '',
      verdict: 'ref',
    })),
    {
      measurement: 'Sizing: connections held per process (PostgreSQL / Redis)',
      measured: Object.entries(sizing.connections)
        .map(([name, c]) => `${name} ${c.postgres} / ${c.redis}`)
        .join(', '),
      target: '',
      verdict: 'ref',
    },
  ];
}

const range = (r: Spread) => `${n2(r.median)}x (${n2(r.min)}-${n2(r.max)})`;

/** The rows of an A/B of two gateways (gateway-ab, keys-ab): medians with the range of the rounds. */
function abRows(ab: AbResults, label: string, b: string, cpuTarget: boolean): Row[] {
  const a = ab.a ? `A (${ab.a.ref} = ${ab.a.sha.slice(0, 7)})` : 'A';
  return ab.summary.flatMap((s): Row[] => {
    const c = `${label}, ${s.connections} conn`;
    const a2 = s.vsDirect['gateway-a2'];
    return [
      {
        measurement: `${c}: throughput vs direct, pass-through / ${a}${a2 ? ' / second A' : ''} / ${b}`,
        measured: [s.vsDirect.passthrough, s.vsDirect.gateway, ...(a2 ? [a2] : []), s.vsDirect['gateway-b']].map(range).join(' / '),
        target: '',
        verdict: 'ref',
      },
      { measurement: `${c}: B / A throughput per round`, measured: range(s.bOverA), target: '', verdict: 'ref' },
      { measurement: `${c}: B / A CPU per request per round`, measured: range(s.cpuBOverA), target: '', verdict: 'ref' },
      ...(s.a2OverA && s.cpuA2OverA
        ? [
            {
              measurement: `${c}: second A / A per round (the A-vs-A spread): throughput; CPU per request`,
              measured: `${range(s.a2OverA)}; ${range(s.cpuA2OverA)}`,
              target: '',
              verdict: 'ref' as const,
            },
          ]
        : []),
      {
        measurement: `${c}: CPU per request over the pass-through's, A / B (µs: pass-through, A, B; redis A, B)`,
        measured:
          `${range(s.cpuVsPassthrough.gateway)} / ${range(s.cpuVsPassthrough['gateway-b'])} ` +
          `(${n0(s.cpuUsPerRequest.passthrough)}, ${n0(s.cpuUsPerRequest.gateway)}, ${n0(s.cpuUsPerRequest['gateway-b'])}; ${n0(s.redisCpuUsPerRequest.gateway)}, ${n0(s.redisCpuUsPerRequest['gateway-b'])})`,
        // Issue 14's target for the gateway's own CPU; an A/B of two builds only compares them.
        target: cpuTarget ? '≤ 1.25x' : '',
        verdict: cpuTarget ? verdict(s.cpuVsPassthrough.gateway.median <= 1.25) : 'ref',
      },
      ...(s.cpuVsPassthrough['passthrough-redis']
        ? [
            {
              measurement: `${c}: CPU per request of the pass-through with the exact limiter's one Redis call (the floor of any proxy that asks Redis once per request) over the pass-through's (µs)`,
              measured: `${range(s.cpuVsPassthrough['passthrough-redis'])} (${n0(s.cpuUsPerRequest['passthrough-redis'] ?? Number.NaN)})`,
              target: '',
              verdict: 'ref' as const,
            },
          ]
        : []),
      {
        measurement: `${c}: verdict`,
        measured: `${s.verdict.throughput.text}; ${s.verdict.cpu.text}`,
        target: "B's loss within the spread of the rounds",
        verdict: verdict(s.verdict.throughput.within && s.verdict.cpu.within),
      },
    ];
  });
}

const paired = (r: PairedRatio) => `${range(r.perRound)}; total/total ${n2(r.totalOverTotal)}x`;

/** Past one machine: the gateway on a Redis Cluster vs one server, and one gateway vs two (per-round ratios, then total over total). */
function fleetRows(fleet: FleetResults): Row[] {
  const cluster = `Redis Cluster (${fleet.cluster.masters} masters, ${fleet.cluster.masters * fleet.cluster.replicasPerMaster} replicas)`;
  const rounds = fleet.topology.summary.length ? new Set(fleet.topology.runs.filter((r) => r.round > 0).map((r) => r.round)).size : 0;
  const rows: Row[] = fleet.topology.summary.flatMap((s): Row[] => {
    const c = `Fleet, gateway on a ${cluster} vs on one redis-server, ${s.connections} conn, ${rounds} paired rounds`;
    return [
      {
        measurement: `${c}: gateway CPU per request, cluster / standalone per round; total/total (µs: standalone, cluster); net of each gateway's idle CPU`,
        measured: `${paired(s.cpu)} (${n0(s.cpuUsPerRequest.standalone)}, ${n0(s.cpuUsPerRequest.cluster)}); net ${paired(s.netCpu)}`,
        target: '',
        verdict: 'ref',
      },
      {
        measurement: `${c}: throughput, cluster / standalone per round; total/total (req/s: standalone, cluster; p50)`,
        measured: `${paired(s.throughput)} (${n0(s.rps.standalone)}, ${n0(s.rps.cluster)}; ${ms(s.p50Ms.standalone)}, ${ms(s.p50Ms.cluster)})`,
        target: '',
        verdict: 'ref',
      },
      {
        measurement: `${c}: Redis CPU per request, µs: the bench's redis-server in standalone / cluster runs (the services use it in both); the cluster's six nodes`,
        measured: `${n0(s.redisCpuUsPerRequest.standaloneServer.standalone)} / ${n0(s.redisCpuUsPerRequest.standaloneServer.cluster)}; ${n0(s.redisCpuUsPerRequest.clusterNodes)}`,
        target: '',
        verdict: 'ref',
      },
    ];
  });
  const masters = fleet.topology.masters;
  rows.push({
    measurement: `Fleet: the gateway's rate-limit keys per cluster master after the rounds (requests over ${fleet.apiKeys} API keys), and the commands each master ran`,
    measured: masters.map((m) => `${m.node} ${m.rateLimitKeys} keys, ${n0(m.commands)} commands`).join('; '),
    target: `${fleet.apiKeys} keys, on every master`,
    verdict: verdict(fleet.topology.rateLimitKeys === fleet.apiKeys && masters.every((m) => m.rateLimitKeys > 0)),
  });
  const idle = Object.values(fleet.idleCpuMsPerS)
    .map((v) => `${n2(v)}`)
    .join(', ');
  const idleRow: Row = {
    measurement: "Fleet: each gateway's CPU with no request, ms per second (standalone, cluster, second standalone)",
    measured: idle,
    target: '',
    verdict: 'ref',
  };
  rows.push(idleRow);
  for (const s of fleet.scale.summary) {
    const c = `Fleet, two gateways vs one (half the connections each), ${s.connections} conn in all`;
    rows.push(
      {
        measurement: `${c}: throughput, two / one per round; total/total (req/s: one, two). On 2 shared cores no throughput scaling can show: gateways, services, Redis and PostgreSQL share them`,
        measured: `${paired(s.throughput)} (${n0(s.rps.one)}, ${n0(s.rps.two)})`,
        target: '',
        verdict: 'ref',
      },
      {
        measurement: `${c}: gateway CPU per request (two: both gateways' CPU summed), two / one per round; total/total (µs: one, two)`,
        measured: `${paired(s.cpu)} (${n0(s.cpuUsPerRequest.one)}, ${n0(s.cpuUsPerRequest.two)})`,
        target: '',
        verdict: 'ref',
      },
      {
        measurement: `${c}: the same net of each gateway's idle CPU (${idle}), two / one per round; total/total (µs: one, two)`,
        measured: `${paired(s.netCpu)} (${n0(s.netCpuUsPerRequest.one)}, ${n0(s.netCpuUsPerRequest.two)})`,
        target: '',
        verdict: 'ref',
      },
      {
        // One gateway carrying what each of the two carries (half the rate, half the connections): what is left is the cost of being two.
        measurement: `${c}: gateway CPU per request net of idle CPU, two / one gateway at half the load (half the rate and connections: each one's share in two) per round; total/total (µs: one at half, two; req/s of one at half)`,
        measured: `${paired(s.cpuOverHalf)} (${n0(s.netCpuUsPerRequest.half)}, ${n0(s.netCpuUsPerRequest.two)}; ${n0(s.rps.half)})`,
        target: 'within the spread of the rounds',
        verdict: verdict(s.cpuOverHalfVerdict.within),
      },
    );
  }
  const e = fleet.scale.exact;
  rows.push({
    measurement: `Fleet: a key limited to ${e.limit} a minute, ${e.seconds} s through two gateways (${e.connectionsPerGateway} connections each): accepted`,
    measured: `${e.accepted} (${e.acceptedPerGateway.join(' + ')}; ${n0(e.rejected)} got 429${Object.keys(e.otherStatuses).length ? `; other ${JSON.stringify(e.otherStatuses)}` : ''})`,
    target: `= ${e.limit}`,
    verdict: verdict(e.accepted === e.limit && Object.keys(e.otherStatuses).length === 0),
  });
  return rows;
}

/** The hot item: reservations against adjustments on one level, per paired round; oversold from the API and the database. */
function hotItemRows(h: HotItemResults): Row[] {
  const rounds = h.reserveOverAdjust.rounds.length;
  const c = `Hot item: ${h.clients} clients empty one level of ${n0(h.stock)} units through the gateway (${rounds} paired rounds)`;
  const p = (l: { p50: number; p99: number }) => `${ms(l.p50)} / ${ms(l.p99)}`;
  return [
    {
      measurement: `${c}: reservations per second (reserve 1 unit, then commit it); p50 / p99 of reserve, commit, and both`,
      measured: `${n0(h.reservationsPerSecond.median)}/s (rounds ${n0(h.reservationsPerSecond.min)}-${n0(h.reservationsPerSecond.max)}); ${p(h.latencyMs.reserve)}, ${p(h.latencyMs.commit)}, ${p(h.latencyMs.reservation)}`,
      target: '',
      verdict: 'ref',
    },
    {
      measurement: `${c}: the same load as stock adjustments (delta -1, sale): adjustments per second; p50 / p99`,
      measured: `${n0(h.adjustmentsPerSecond.median)}/s (rounds ${n0(h.adjustmentsPerSecond.min)}-${n0(h.adjustmentsPerSecond.max)}); ${p(h.latencyMs.adjust)}`,
      target: '',
      verdict: 'ref',
    },
    {
      measurement: `${c}: reservations per second / adjustments per second, per round (a reservation is two requests)`,
      measured: range(h.reserveOverAdjust),
      target: '',
      verdict: 'ref',
    },
    {
      measurement: `${c}: units oversold (committed beyond the stock, from the API and the database after each run, warm-up included); runs ended with units available; units left reserved by a first try whose answer was lost (they expire); answers retried with the same Idempotency-Key (429, 5xx, still running)`,
      measured: `${h.oversold}; ${h.notEmptied} of ${h.runs.length}; ${h.leftReserved}; ${n0(h.retried)}`,
      target: '0; 0',
      verdict: verdict(h.oversold === 0 && h.notEmptied === 0),
    },
  ];
}

const kb = (bytes: number) => `${n0(bytes / 1024)} KiB`;

function checkinRows(c: CheckinResults): Row[] {
  const { uploads: u, replay, fullDownload: full, fullDownloadSinceEpoch: fromEpoch, changes, delta, stats } = c;
  const latencies = (p: CheckinResults['stats']['quiet']) =>
    `stats ${ms(p.statsP50Ms)} / ${ms(p.statsP99Ms)}; in SQL: counters ${ms(p.countersP50Ms)} / ${ms(p.countersP99Ms)}, count ${ms(p.countP50Ms)} / ${ms(p.countP99Ms)}`;
  return [
    {
      measurement: `Check-in: ${n0(u.scans)} offline scans (${n0(u.distinctTickets)} tickets) in ${n0(u.uploads)} uploads of ≤ 500, ${u.clients} scanners at once, through the gateway: scans/s; upload p50 / p99`,
      measured: `${n0(u.scansPerSecond)} scans/s; ${ms(u.latencyP50Ms)} / ${ms(u.latencyP99Ms)}`,
      target: '',
      verdict: 'ref',
    },
    {
      measurement: 'Check-in uploads: tickets validated twice; never; wrong results; stats as the results say',
      measured:
        `${u.ticketsValidatedTwice}; ${u.ticketsNeverValidated}; ${u.resultsWrong}; ${u.statsMatch ? 'yes' : 'NO'} ` +
        `(${n0(u.validated)} validated, ${n0(u.alreadyValidated)} already validated, ${u.otherStatuses} other; table ${n0(u.tableValidated)} validated)`,
      target: '0; 0; 0; yes',
      verdict: verdict(u.ticketsValidatedTwice === 0 && u.ticketsNeverValidated === 0 && u.resultsWrong === 0 && u.otherStatuses === 0 && u.statsMatch),
    },
    {
      measurement: 'Check-in: every upload again (same scan ids): byte-identical answers; stats unchanged',
      measured: `${n0(replay.identical)} of ${n0(replay.uploads)}; ${replay.statsUnchanged ? 'yes' : 'NO'} (${n2(replay.seconds)} s, ${n0(replay.scansPerSecond)} scans/s)`,
      target: 'all; yes',
      verdict: verdict(replay.identical === replay.uploads && replay.statsUnchanged),
    },
    {
      measurement: `Check-in: full download of ${n0(c.tickets)} tickets (limit 100): time, requests, bytes gzip on the wire (decoded); a page, first / last tenth`,
      measured: `${n2(full.seconds)} s, ${n0(full.requests)}, ${kb(full.wireBytes)} (${kb(full.decodedBytes)}); ${n0(full.distinct)} distinct tickets; a page ${ms(full.firstPagesMs)} → ${ms(full.lastPagesMs)}`,
      target: `${n0(c.tickets)} distinct`,
      verdict: verdict(full.tickets === c.tickets && full.distinct === c.tickets),
    },
    {
      measurement: 'Check-in: the same list with updated_since at the epoch (the delta path): time, requests; a page, first / last tenth',
      measured: `${n2(fromEpoch.seconds)} s, ${n0(fromEpoch.requests)}; ${n0(fromEpoch.distinct)} distinct tickets; a page ${ms(fromEpoch.firstPagesMs)} → ${ms(fromEpoch.lastPagesMs)}`,
      target: `${n0(c.tickets)} distinct`,
      verdict: verdict(fromEpoch.tickets === c.tickets && fromEpoch.distinct === c.tickets),
    },
    {
      measurement: `Check-in: delta (updated_since = newest seen − ${n0(delta.marginMs)} ms) after ${n0(changes.validations + changes.unvalidations)} changes (${n0(changes.validations)} validations, ${n0(changes.unvalidations)} reversals): time, requests, bytes gzip (decoded); changed tickets in it`,
      measured:
        `${ms(delta.seconds * 1000)}, ${n0(delta.requests)}, ${kb(delta.wireBytes)} (${kb(delta.decodedBytes)}); ` +
        `${n0(delta.changedIncluded)} of ${n0(changes.validations + changes.unvalidations)}, ${delta.wrongStatus} with a wrong status, ${n0(delta.others)} other tickets`,
      target: 'all, 0',
      verdict: verdict(delta.changedIncluded === changes.validations + changes.unvalidations && delta.wrongStatus === 0),
    },
    {
      measurement: 'Check-in: GET stats through the gateway; in SQL, the counters it reads vs a count of validated tickets per gate; p50 / p99, quiet',
      measured: latencies(stats.quiet),
      target: '',
      verdict: 'ref',
    },
    {
      measurement: `Check-in: the same under ${stats.onlineScanners} online scanners (${n0(stats.validationsPerSecond)} validations/s, p50 ${ms(stats.validationP50Ms)}); stats equal the table after`,
      measured: `${latencies(stats.underLoad)}; ${stats.consistentAfter ? 'yes' : 'NO'}`,
      target: 'yes',
      verdict: verdict(stats.consistentAfter),
    },
  ];
}

export function markdownTable(rows: Row[]): string {
  const lines = ['| measurement | measured | target | |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.measurement} | ${r.measured} | ${r.target} | ${r.verdict} |`);
  return lines.join('\n');
}

export function textTable(rows: Row[]): string {
  const widths = [0, 1, 2, 3].map((i) =>
    Math.max(...rows.map((r) => [r.measurement, r.measured, r.target, r.verdict][i]!.length), ['measurement', 'measured', 'target', ''][i]!.length),
  );
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [
    line(['measurement', 'measured', 'target', '']),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line([r.measurement, r.measured, r.target, r.verdict])),
  ].join('\n');
}

function runLineRows(r: RunLineResults): Row[] {
  const c = `Pending line: one pipeline with concurrency_policy "enqueue", ${r.triggers} triggers in ${r.spreadS} s (${r.records} records a run)`;
  return [
    {
      measurement: `${c}: runs that started before the run before them ended, or out of trigger order (of ${r.succeeded} runs)`,
      measured: `${r.overlaps} overlapping, ${r.outOfOrder} out of order`,
      target: '0 and 0',
      verdict: verdict(r.overlaps === 0 && r.outOfOrder === 0),
    },
    {
      measurement: `${c}: hand-over from a run's finished_at to the next waiting run's started_at, p50 / p99 / max (${r.handoffs} hand-overs; a run takes ${ms(r.runP50Ms)} p50)`,
      measured: `${ms(r.handoffP50Ms)} / ${ms(r.handoffP99Ms)} / ${ms(r.handoffMaxMs)}`,
      target: '',
      verdict: 'ref',
    },
    {
      measurement: `${c}: answers 202 (queued, pending) / 409 too_many_pending / other`,
      measured: `${r.accepted.queued}, ${r.accepted.pending} / ${r.refusedTooManyPending} / ${r.otherAnswers}`,
      target: 'other 0',
      verdict: verdict(r.otherAnswers === 0),
    },
  ];
}

function fairRunsRows(f: FairRunsResults): Row[] {
  const c = `Fair runs: B's trigger-to-start (created_at → started_at) beside ${n0(f.pipelines)} pipelines of A every 1 s (${f.records} records a run)`;
  return [
    {
      measurement: `${c}, without / with A ticking, p50 / p99 (runs of B: ${f.quiet.samples}, ${f.flood.samples})`,
      measured: `${ms(f.quiet.p50Ms)} / ${ms(f.quiet.p99Ms)} → ${ms(f.flood.p50Ms)} / ${ms(f.flood.p99Ms)}`,
      target: `p99 with A ≤ ${ms(f.boundMs)} (5x quiet p99, at least + 2 s, + A's run p99)`,
      verdict: verdict(f.flood.p99Ms <= f.boundMs),
    },
    {
      measurement: `${c}: p50 with A / without, per paired round; A's runs during the flood (per second; worker slot held, p99)`,
      measured: `${f.p50RatioPerRound.map(n2).join(', ')}; ${n2(f.aRunsPerS)} runs/s, ${ms(f.aRunP99Ms)}`,
      target: '',
      verdict: 'ref',
    },
  ];
}
