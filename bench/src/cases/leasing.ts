import type { BenchContext } from '../context';
import { cpuTimeMs } from '../proc';
import { median } from '../stats';
import { interleavedRounds, measurer, processPid, ticketSupply, validateSigned, validateViaGateway, type ProxyPlan, type ProxyRun } from './proxy';

type LeasingVariant = 'direct' | 'leasing' | 'no-leasing';

export interface LeasingRun extends ProxyRun {
  variant: LeasingVariant;
  /** CPU of the bench's redis-server per 2xx answer, µs. */
  redisCpuUsPerRequest: number;
}

export interface LeasingSummary {
  connections: number;
  /** Per round, leasing's throughput over no-leasing's (the two gateways measured in the same round). */
  pairedRatios: number[];
  medianPairedRatio: number;
  /** Each gateway's throughput vs direct, per round, median and range: the spread of the rounds. */
  vsDirect: Record<'leasing' | 'no-leasing', { median: number; min: number; max: number }>;
  /** Medians of gateway + redis-server CPU per request, µs. */
  cpuUsPerRequest: Record<'leasing' | 'no-leasing', { gateway: number; redis: number }>;
  /** The gain counts only when leasing won every round and its median gain is wider than the spread of either gateway's rounds. */
  verdict: 'keep leasing' | 'remove leasing';
}

export interface LeasingResults {
  runs: LeasingRun[];
  summary: LeasingSummary[];
}

/**
 * Issue 14's question: does leasing rate-limit slots ahead (GATEWAY_RATE_LIMIT_LEASE_MAX, default 64)
 * earn its code? Two gateways of the same platform, one leasing and one asking Redis once per request
 * (GATEWAY_RATE_LIMIT_LEASE_MAX=1), and the direct call as the baseline, interleaved per round.
 */
export async function leasingCase(ctx: BenchContext, plan: Omit<ProxyPlan, 'profileS'>, redisPid: number | undefined): Promise<LeasingResults> {
  const { platform } = ctx;
  const tickets = await ticketSupply(ctx, plan.tickets);
  const noLeasing = await platform.add({ kind: 'gateway', name: 'gateway-no-leasing', env: { GATEWAY_RATE_LIMIT_LEASE_MAX: '1' } });
  const urlOf = (name: string) => platform.processes().find((p) => p.name === name)!.url;
  const gatewayMeasure = measurer<LeasingVariant>(ctx, (variant) =>
    variant === 'direct'
      ? { url: platform.serviceUrls.events, pid: undefined, next: () => validateSigned(ctx, tickets.next()) }
      : {
          url: urlOf(variant === 'leasing' ? 'gateway' : noLeasing),
          pid: processPid(ctx, variant === 'leasing' ? 'gateway' : noLeasing),
          next: () => validateViaGateway(platform.token, tickets.next()),
        },
  );
  const measure = async (variant: LeasingVariant, connections: number, durationS: number, round: number): Promise<LeasingRun> => {
    const before = cpuTimeMs(redisPid);
    const run = await gatewayMeasure(variant, connections, durationS, round);
    return { ...run, redisCpuUsPerRequest: ((cpuTimeMs(redisPid) - before) * 1000) / run.ok };
  };
  const runs = await interleavedRounds(ctx, measure, ['direct', 'leasing', 'no-leasing'], plan);

  const summary = plan.connections.map((connections): LeasingSummary => {
    const round = (variant: LeasingVariant, r: number) => runs.find((x) => x.variant === variant && x.connections === connections && x.round === r)!;
    const rounds = [...new Set(runs.filter((x) => x.round > 0).map((x) => x.round))];
    const pairedRatios = rounds.map((r) => round('leasing', r).rps / round('no-leasing', r).rps);
    const spread = (variant: 'leasing' | 'no-leasing') => {
      const ratios = rounds.map((r) => round(variant, r).rps / round('direct', r).rps);
      return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
    };
    const cpu = (variant: 'leasing' | 'no-leasing') => {
      const mine = runs.filter((x) => x.variant === variant && x.connections === connections && x.round > 0);
      return { gateway: median(mine.map((x) => x.proxyCpuUsPerRequest)), redis: median(mine.map((x) => x.redisCpuUsPerRequest)) };
    };
    const vsDirect = { leasing: spread('leasing'), 'no-leasing': spread('no-leasing') };
    const medianPairedRatio = median(pairedRatios);
    const widestSpread = Math.max(...Object.values(vsDirect).map((s) => (s.max - s.min) / s.median));
    const wins = Math.min(...pairedRatios) > 1 && medianPairedRatio - 1 > widestSpread;
    return {
      connections,
      pairedRatios,
      medianPairedRatio,
      vsDirect,
      cpuUsPerRequest: { leasing: cpu('leasing'), 'no-leasing': cpu('no-leasing') },
      verdict: wins ? 'keep leasing' : 'remove leasing',
    };
  });
  return { runs, summary };
}
