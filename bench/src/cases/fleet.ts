import { Redis } from 'ioredis';
import { startRedisCluster, redisInfo, type RedisCluster, type RedisNode } from '@platform/testing';
import type { BenchContext } from '../context';
import { runLoad, type LoadResult } from '../load';
import { cpuTimeMs } from '../proc';
import { lossVerdict, spread, type LossVerdict, type Spread } from '../spread';
import { median, sleep } from '../stats';
import { interleavedRounds, processPid, ticketSupply, validateViaGateway, type ProxyRun } from './proxy';

/**
 * Past one machine, measured on one: the same gateway build on a standalone Redis and on a Redis
 * Cluster (3 masters, 3 replicas), and one gateway against two, in paired interleaved rounds.
 * `npm run bench -- --only=fleet [--rounds=N] [--quick]`.
 */

export interface FleetPlan {
  rounds: number;
  /** Part 1 (standalone vs cluster): connections of each run. */
  connections: number[];
  /** Part 2 (one gateway vs two): the total connections of each run, split in halves over two gateways. */
  splitConnections: number[];
  durationS: Record<number, number>;
  tickets: number;
  /**
   * API keys part 1's requests rotate over: the limiter keeps one key per API key and bucket,
   * so one API key would put every request on one hash slot and one master.
   */
  apiKeys: number;
  /** Part 2's exactness check: a key limited to this many events requests a minute, both gateways under load. */
  exactLimit: number;
  /** Shorter than the 60 s window, so nothing accepted leaves it: exactly the limit must be accepted. */
  exactS: number;
  exactConnectionsPerGateway: number;
  /** How long each gateway's CPU is read with no request, for its background work (key-change feed, activity flush, probes). */
  idleS: number;
}

type TopologyVariant = 'standalone' | 'cluster';
/** `half`: one gateway at half the rate the last run at those connections reached, on half the connections: each gateway's share in `two`. */
type ScaleVariant = 'one' | 'two' | 'half';

export interface FleetRun extends ProxyRun {
  variant: TopologyVariant | ScaleVariant;
  /** CPU of the measured gateways (both, for `two`) over the run, ms. */
  gatewayCpuMs: number;
  /** The same less what those gateways spend idle in as long a time (their background work, read after the rounds). */
  netGatewayCpuMs: number;
  /** The gateways the run went through. */
  gateways: string[];
  /** The connections of the round's step this run belongs to (a `half` run has half of them). */
  step: number;
  /** CPU over the run of the bench's redis-server and of every cluster node, ms. */
  redisCpuMs: { standalone: number; cluster: number };
}

/** Per-round ratios (median, min-max) and the ratio of the totals of every round. */
export interface PairedRatio {
  perRound: Spread;
  totalOverTotal: number;
}

export interface TopologySummary {
  connections: number;
  /** Cluster over standalone, gateway CPU per 2xx answer. */
  cpu: PairedRatio;
  /** The same, net of each gateway's idle background CPU. */
  netCpu: PairedRatio;
  /** Cluster over standalone, 2xx answers per second. */
  throughput: PairedRatio;
  /** Medians over the rounds. */
  cpuUsPerRequest: Record<TopologyVariant, number>;
  rps: Record<TopologyVariant, number>;
  p50Ms: Record<TopologyVariant, number>;
  /** Redis CPU per 2xx answer, medians: the bench's server in each variant's runs (the services use it in both), the cluster's nodes in the cluster's. */
  redisCpuUsPerRequest: { standaloneServer: Record<TopologyVariant, number>; clusterNodes: number };
}

export interface ScaleSummary {
  connections: number;
  /** Two over one, total 2xx answers per second. */
  throughput: PairedRatio;
  /** Two over one, gateway CPU per 2xx answer (both gateways' CPU summed for two). */
  cpu: PairedRatio;
  /**
   * Two over one gateway at each one's share of the load (half the rate, half the connections),
   * net of idle CPU: what being two instances costs beyond each one carrying less, e.g.
   * coordination through Redis.
   */
  cpuOverHalf: PairedRatio;
  cpuOverHalfVerdict: LossVerdict;
  /**
   * The same, net of the gateways' idle background CPU: a second instance pays its background
   * once more per second, which at this machine's few hundred requests a second is a visible
   * share of a request and at production rates is not.
   */
  netCpu: PairedRatio;
  rps: Record<ScaleVariant, number>;
  cpuUsPerRequest: Record<ScaleVariant, number>;
  netCpuUsPerRequest: Record<ScaleVariant, number>;
}

export interface FleetResults {
  cluster: { masters: number; replicasPerMaster: number; seeds: string };
  ticketsCreated: number;
  ticketsUsed: number;
  apiKeys: number;
  /** Each gateway's CPU with no request, ms per second. */
  idleCpuMsPerS: Record<string, number>;
  topology: {
    runs: FleetRun[];
    summary: TopologySummary[];
    /** The gateway's rate-limit keys on each master after the rounds (SCAN on the master itself), and the commands each master ran during them. */
    masters: { node: string; rateLimitKeys: number; commands: number }[];
    rateLimitKeys: number;
  };
  scale: {
    runs: FleetRun[];
    summary: ScaleSummary[];
    exact: {
      limit: number;
      seconds: number;
      connectionsPerGateway: number;
      acceptedPerGateway: number[];
      accepted: number;
      rejected: number;
      otherStatuses: Record<string, number>;
    };
  };
}

const addressOf = (node: RedisNode) => `${node.host}:${node.port}`;

async function withNode<T>(node: RedisNode, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ host: node.host, port: node.port, lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

async function commandsRun(node: RedisNode): Promise<number> {
  const stats = await redisInfo(node, 'commandstats');
  return Object.values(stats).reduce((sum, value) => sum + Number(/calls=(\d+)/.exec(value)?.[1] ?? 0), 0);
}

async function countKeys(node: RedisNode, pattern: string): Promise<number> {
  return withNode(node, async (redis) => {
    let cursor = '0';
    let count = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    return count;
  });
}

/** `figure`: gateway CPU per request (raw or net of background), or throughput. */
const pairedRatio = (runs: FleetRun[], top: FleetRun['variant'], bottom: FleetRun['variant'], figure: 'cpu' | 'netCpu' | 'throughput'): PairedRatio => {
  const rounds = [...new Set(runs.map((r) => r.round))];
  const at = (variant: FleetRun['variant'], round: number) => runs.find((r) => r.variant === variant && r.round === round)!;
  const cpuOf = (r: FleetRun) => (figure === 'netCpu' ? r.netGatewayCpuMs : r.gatewayCpuMs);
  const value = (r: FleetRun) => (figure === 'throughput' ? r.ok / r.durationS : cpuOf(r) / r.ok);
  const total = (variant: FleetRun['variant']) => {
    const mine = runs.filter((r) => r.variant === variant);
    const ok = mine.reduce((sum, r) => sum + r.ok, 0);
    return figure === 'throughput' ? ok / mine.reduce((sum, r) => sum + r.durationS, 0) : mine.reduce((sum, r) => sum + cpuOf(r), 0) / ok;
  };
  return { perRound: spread(rounds.map((round) => value(at(top, round)) / value(at(bottom, round)))), totalOverTotal: total(top) / total(bottom) };
};

const medianOf = (runs: FleetRun[], variant: FleetRun['variant'], f: (r: FleetRun) => number) => median(runs.filter((r) => r.variant === variant).map(f));

/** Two load results run at once, as one: counts summed, the slower half's latency. */
function combined(a: LoadResult, b: LoadResult): LoadResult {
  const statusCounts: Record<string, number> = { ...a.statusCounts };
  for (const [code, n] of Object.entries(b.statusCounts)) statusCounts[code] = (statusCounts[code] ?? 0) + n;
  return {
    connections: a.connections + b.connections,
    durationS: Math.max(a.durationS, b.durationS),
    rps: a.rps + b.rps,
    ok: a.ok + b.ok,
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    p50: Math.max(a.p50, b.p50),
    p99: Math.max(a.p99, b.p99),
    statusCounts,
  };
}

/**
 * Part 1: two gateways of this build on the same services, one on the bench's redis-server, one on
 * a Redis Cluster; part 2: the same total load through one gateway, then over two (half the
 * connections each), both on the bench's server; then a key with a small limit under load through
 * both gateways at once, which must accept exactly its limit.
 */
export async function fleetCase(ctx: BenchContext, plan: FleetPlan, redisPid: number | undefined): Promise<FleetResults> {
  const { platform, log } = ctx;
  const masters = 3;
  const replicasPerMaster = 1;
  log(`starting a Redis Cluster: ${masters} masters, ${replicasPerMaster} replica each`);
  const cluster: RedisCluster = await startRedisCluster({ masters, replicasPerMaster });
  const added: string[] = [];
  try {
    const tickets = await ticketSupply(ctx, plan.tickets);
    const keys = [];
    for (let i = 0; i < plan.apiKeys; i++) keys.push(await platform.createApiKey({ name: `bench fleet ${i}` }));
    const tokens = keys.map((k) => k.token);
    let nextToken = 0;
    const validation = () => validateViaGateway(tokens[nextToken++ % tokens.length]!, tickets.next());

    const gateways = { standalone: 'fleet-standalone', cluster: 'fleet-cluster', second: 'fleet-standalone-2' } as const;
    for (const name of Object.values(gateways)) {
      await platform.add({ kind: 'gateway', name, ...(name === gateways.cluster ? { redis: cluster } : {}) });
      added.push(name);
    }
    const urlOf = (name: string) => platform.processes().find((p) => p.name === name)!.url;
    const clusterPids = await Promise.all(cluster.nodes.map(async (node) => Number((await redisInfo(node, 'server')).process_id)));
    const redisCpu = () => ({ standalone: cpuTimeMs(redisPid), cluster: clusterPids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0) });

    /** One run through `names` at once, `connections` split evenly over them (and `overallRate` too, when given). */
    const measure = async (
      variant: FleetRun['variant'],
      names: string[],
      connections: number,
      durationS: number,
      round: number,
      overallRate?: number,
    ): Promise<FleetRun> => {
      const pids = names.map((name) => processPid(ctx, name));
      const gatewayCpu = () => pids.reduce<number>((sum, pid) => sum + cpuTimeMs(pid), 0);
      const cpuBefore = gatewayCpu();
      const redisBefore = redisCpu();
      const serviceBefore = cpuTimeMs(processPid(ctx, 'events'));
      const results = await Promise.all(
        names.map((name, i) =>
          runLoad({
            url: urlOf(name),
            connections: Math.floor(connections / names.length) + (i < connections % names.length ? 1 : 0),
            durationS,
            next: validation,
            ...(overallRate ? { overallRate: overallRate / names.length } : {}),
          }),
        ),
      );
      const result = results.reduce(combined);
      const gatewayCpuMs = gatewayCpu() - cpuBefore;
      const redisAfter = redisCpu();
      const serviceCpu = cpuTimeMs(processPid(ctx, 'events')) - serviceBefore;
      if (result.non2xx > 0 || result.errors > 0)
        log(`  ${variant} c=${connections}: ${result.non2xx} non-2xx ${JSON.stringify(result.statusCounts)}, ${result.errors} errors`);
      return {
        ...result,
        variant,
        round,
        gatewayCpuMs,
        // Set once the idle CPU is known (after the rounds).
        netGatewayCpuMs: Number.NaN,
        gateways: names,
        step: connections,
        redisCpuMs: { standalone: redisAfter.standalone - redisBefore.standalone, cluster: redisAfter.cluster - redisBefore.cluster },
        proxyCpuUsPerRequest: (gatewayCpuMs * 1000) / result.ok,
        serviceCpuUsPerRequest: (serviceCpu * 1000) / result.ok,
      };
    };

    log(`part 1: the same gateway on the bench's redis-server and on the cluster, ${plan.rounds} rounds, requests over ${plan.apiKeys} API keys`);
    const mastersBefore = await cluster.masters();
    const commandsBefore = await Promise.all(mastersBefore.map(commandsRun));
    const topologyRounds = await interleavedRounds(
      ctx,
      (variant: TopologyVariant, connections, durationS, round) => measure(variant, [gateways[variant]], connections, durationS, round),
      ['standalone', 'cluster'],
      plan,
    );
    // Right after the rounds: every limiter key was hit within the last round, well inside its 60 s expiry.
    const pattern = `${platform.queuePrefix.replace(/[{}]/g, '')}:gateway:rl:*`;
    const mastersAfter = await cluster.masters();
    const masterFigures = await Promise.all(
      mastersAfter.map(async (node) => {
        const before = mastersBefore.findIndex((m) => addressOf(m) === addressOf(node));
        return { node: addressOf(node), rateLimitKeys: await countKeys(node, pattern), commands: (await commandsRun(node)) - (commandsBefore[before] ?? 0) };
      }),
    );
    const rateLimitKeys = masterFigures.reduce((sum, m) => sum + m.rateLimitKeys, 0);
    log(`rate-limit keys per master: ${masterFigures.map((m) => `${m.node} ${m.rateLimitKeys} keys, ${m.commands} commands`).join('; ')}`);
    log(`part 2: one gateway against two (half the connections each), both on the bench's redis-server, ${plan.rounds} rounds`);
    // The total rate the latest one or two reached at each connection count: half of it is each gateway's share in two.
    const lastRate = new Map<number, number>();
    const scaleRounds = await interleavedRounds(
      ctx,
      async (variant: ScaleVariant, connections, durationS, round) => {
        // One alternates between the two gateways round by round: the second ran no part 1, so neither's warmth decides the pairs.
        const alone = [round % 2 ? gateways.standalone : gateways.second];
        if (variant === 'half') {
          const rate = lastRate.get(connections);
          const run = await measure(
            variant,
            alone,
            Math.max(1, Math.floor(connections / 2)),
            durationS,
            round,
            rate ? Math.max(1, Math.round(rate / 2)) : undefined,
          );
          return { ...run, step: connections };
        }
        const run = await measure(variant, variant === 'two' ? [gateways.standalone, gateways.second] : alone, connections, durationS, round);
        lastRate.set(connections, run.rps);
        return run;
      },
      ['one', 'two', 'half'],
      { ...plan, connections: plan.splitConnections },
    );

    // Each gateway's CPU with no request, read once they are warm: what a second instance adds per second whatever the load.
    await sleep(2_000);
    const idleBefore = Object.values(gateways).map((name) => cpuTimeMs(processPid(ctx, name)));
    const idleFrom = Date.now();
    await sleep(plan.idleS * 1000);
    const idleCpuMsPerS = Object.fromEntries(
      Object.values(gateways).map((name, i) => [name, ((cpuTimeMs(processPid(ctx, name)) - idleBefore[i]!) * 1000) / (Date.now() - idleFrom)]),
    );
    log(
      `idle gateway CPU, ms per second: ${Object.entries(idleCpuMsPerS)
        .map(([name, v]) => `${name} ${v.toFixed(1)}`)
        .join(', ')}`,
    );
    const withNet = (runs: FleetRun[]) =>
      runs.map((r) => ({ ...r, netGatewayCpuMs: r.gatewayCpuMs - r.gateways.reduce((sum, name) => sum + idleCpuMsPerS[name]! * r.durationS, 0) }));
    const topologyRuns = withNet(topologyRounds);
    const scaleRuns = withNet(scaleRounds);

    const measured = (runs: FleetRun[], connections: number) => runs.filter((r) => r.step === connections && r.round > 0);
    const topologySummary = plan.connections.map((connections): TopologySummary => {
      const runs = measured(topologyRuns, connections);
      const perVariant = (f: (r: FleetRun) => number) => ({ standalone: medianOf(runs, 'standalone', f), cluster: medianOf(runs, 'cluster', f) });
      return {
        connections,
        cpu: pairedRatio(runs, 'cluster', 'standalone', 'cpu'),
        netCpu: pairedRatio(runs, 'cluster', 'standalone', 'netCpu'),
        throughput: pairedRatio(runs, 'cluster', 'standalone', 'throughput'),
        cpuUsPerRequest: perVariant((r) => r.proxyCpuUsPerRequest),
        rps: perVariant((r) => r.rps),
        p50Ms: perVariant((r) => r.p50),
        redisCpuUsPerRequest: {
          standaloneServer: perVariant((r) => (r.redisCpuMs.standalone * 1000) / r.ok),
          clusterNodes: medianOf(runs, 'cluster', (r) => (r.redisCpuMs.cluster * 1000) / r.ok),
        },
      };
    });
    const rounds = (s: Spread) => s.rounds.map((v) => v.toFixed(2)).join(' ');
    for (const s of topologySummary) {
      log(`c=${s.connections} cluster/standalone per round: CPU per request ${rounds(s.cpu.perRound)} (total/total ${s.cpu.totalOverTotal.toFixed(2)})`);
      log(
        `c=${s.connections} cluster/standalone per round: CPU per request net of background ${rounds(s.netCpu.perRound)} (total/total ${s.netCpu.totalOverTotal.toFixed(2)})`,
      );
      log(
        `c=${s.connections} cluster/standalone per round: throughput ${rounds(s.throughput.perRound)} (total/total ${s.throughput.totalOverTotal.toFixed(2)})`,
      );
    }

    const scaleSummary = plan.splitConnections.map((connections): ScaleSummary => {
      const runs = measured(scaleRuns, connections);
      const perVariant = (f: (r: FleetRun) => number) => ({ one: medianOf(runs, 'one', f), two: medianOf(runs, 'two', f), half: medianOf(runs, 'half', f) });
      const cpuOverHalf = pairedRatio(runs, 'two', 'half', 'netCpu');
      return {
        connections,
        cpuOverHalf,
        cpuOverHalfVerdict: lossVerdict('CPU per request (net) two / one at half the load', cpuOverHalf.perRound, undefined, false),
        throughput: pairedRatio(runs, 'two', 'one', 'throughput'),
        cpu: pairedRatio(runs, 'two', 'one', 'cpu'),
        netCpu: pairedRatio(runs, 'two', 'one', 'netCpu'),
        rps: perVariant((r) => r.rps),
        cpuUsPerRequest: perVariant((r) => r.proxyCpuUsPerRequest),
        netCpuUsPerRequest: perVariant((r) => (r.netGatewayCpuMs * 1000) / r.ok),
      };
    });
    for (const s of scaleSummary) {
      log(`c=${s.connections} two/one per round: throughput ${rounds(s.throughput.perRound)} (total/total ${s.throughput.totalOverTotal.toFixed(2)})`);
      log(`c=${s.connections} two/one per round: CPU per request ${rounds(s.cpu.perRound)} (total/total ${s.cpu.totalOverTotal.toFixed(2)})`);
      log(
        `c=${s.connections} two/one per round: CPU per request net of background ${rounds(s.netCpu.perRound)} (total/total ${s.netCpu.totalOverTotal.toFixed(2)})`,
      );
      log(
        `c=${s.connections} two/(one at half the load) per round: CPU per request net of background ${rounds(s.cpuOverHalf.perRound)} (total/total ${s.cpuOverHalf.totalOverTotal.toFixed(2)})`,
      );
      log(`c=${s.connections} ${s.cpuOverHalfVerdict.text}`);
    }
    log('on 2 shared cores two gateways cannot show throughput scaling: they compete with the services, Redis and PostgreSQL for the same cores');

    const exact = await exactLimit(ctx, plan, [urlOf(gateways.standalone), urlOf(gateways.second)]);
    return {
      cluster: { masters, replicasPerMaster, seeds: cluster.seeds },
      ticketsCreated: tickets.created,
      ticketsUsed: tickets.used(),
      apiKeys: plan.apiKeys,
      idleCpuMsPerS,
      topology: { runs: topologyRuns, summary: topologySummary, masters: masterFigures, rateLimitKeys },
      scale: { runs: scaleRuns, summary: scaleSummary, exact },
    };
  } finally {
    for (const name of added) await platform.kill(name, 'SIGTERM');
    await cluster.stop();
  }
}

/** A fresh key limited to `plan.exactLimit` events requests a minute, under load through both gateways for less than the window: exactly the limit is accepted. */
async function exactLimit(ctx: BenchContext, plan: FleetPlan, urls: string[]): Promise<FleetResults['scale']['exact']> {
  const { platform } = ctx;
  const key = await ctx.platform.createApiKey({ name: 'bench fleet exact limit' });
  const res = await fetch(`${platform.gatewayUrl}/admin/v1/workspaces/${platform.workspaceId}/api-keys/${key.id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${platform.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ rate_limits: { events: plan.exactLimit } }),
  });
  if (!res.ok) throw new Error(`PATCH the exact-limit key: ${res.status} ${await res.text()}`);
  // Written straight to the database: a request would spend the key's budget.
  const { rows } = await ctx.db.events.query<{ id: string }>(
    `INSERT INTO events (id, workspace_id, name, starts_at) VALUES (gen_random_uuid(), $1, 'Fleet limit target', now()) RETURNING id`,
    [ctx.identity.workspaceId],
  );
  const path = `/events/v0/events/${rows[0]!.id}`;
  ctx.log(
    `exact limit: a key limited to ${plan.exactLimit} a minute, ${plan.exactS} s through ${urls.length} gateways, ${plan.exactConnectionsPerGateway} connections each`,
  );
  const results = await Promise.all(
    urls.map((url) =>
      runLoad({
        url,
        connections: plan.exactConnectionsPerGateway,
        durationS: plan.exactS,
        next: () => ({ method: 'GET', path, headers: { authorization: `Bearer ${key.token}` } }),
      }),
    ),
  );
  const acceptedPerGateway = results.map((r) => Object.entries(r.statusCounts).reduce((sum, [code, n]) => (code === '429' ? sum : sum + n), 0));
  const otherStatuses: Record<string, number> = {};
  for (const r of results)
    for (const [code, n] of Object.entries(r.statusCounts)) if (code !== '200' && code !== '429') otherStatuses[code] = (otherStatuses[code] ?? 0) + n;
  const accepted = acceptedPerGateway.reduce((a, b) => a + b, 0);
  ctx.log(`exact limit: accepted ${accepted} (${acceptedPerGateway.join(' + ')}) of a limit of ${plan.exactLimit}`);
  return {
    limit: plan.exactLimit,
    seconds: plan.exactS,
    connectionsPerGateway: plan.exactConnectionsPerGateway,
    acceptedPerGateway,
    accepted,
    rejected: results.reduce((sum, r) => sum + (r.statusCounts['429'] ?? 0), 0),
    otherStatuses,
  };
}
