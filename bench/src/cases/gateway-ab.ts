import type { BenchContext } from '../context';
import { cpuTimeMs } from '../proc';
import { median } from '../stats';
import {
  interleavedRounds,
  measurer,
  processPid,
  startVariant,
  ticketSupply,
  validateSigned,
  validateViaGateway,
  type ProxyPlan,
  type ProxyRun,
} from './proxy';

type AbVariant = 'direct' | 'passthrough' | 'gateway' | 'gateway-b';

export interface AbRun extends ProxyRun {
  variant: AbVariant;
  /** CPU of the bench's redis-server per 2xx answer, µs. */
  redisCpuUsPerRequest: number;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface AbSummary {
  connections: number;
  /** Throughput vs the direct call in the same round. */
  vsDirect: Record<'passthrough' | 'gateway' | 'gateway-b', Spread>;
  /** Per round, B's throughput over A's. */
  bOverA: Spread;
  /** Per round, each gateway's CPU per request over the pass-through's. */
  cpuVsPassthrough: Record<'gateway' | 'gateway-b', Spread>;
  /** Medians, µs per request. */
  cpuUsPerRequest: Record<'passthrough' | 'gateway' | 'gateway-b', number>;
  redisCpuUsPerRequest: Record<'gateway' | 'gateway-b', number>;
}

export interface AbResults {
  bEnv: Record<string, string>;
  runs: AbRun[];
  summary: AbSummary[];
}

const spread = (values: number[]): Spread => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });

/**
 * A/B of a gateway setting: the platform's gateway (A) and a second gateway of the same platform
 * started with `bEnv` on top (B), with the direct call and the pass-through in the same rounds,
 * interleaved. `npm run bench -- --only=gateway-ab --b-env=NAME=value,...`.
 */
export async function gatewayAbCase(
  ctx: BenchContext,
  plan: Omit<ProxyPlan, 'profileS'>,
  bEnv: Record<string, string>,
  redisPid: number | undefined,
): Promise<AbResults> {
  const { platform } = ctx;
  const tickets = await ticketSupply(ctx, plan.tickets);
  const b = await platform.add({ kind: 'gateway', name: 'gateway-b', env: bEnv });
  const passthrough = await startVariant(ctx, 'passthrough');
  try {
    const gatewayNamed = (name: string) => ({
      url: platform.processes().find((p) => p.name === name)!.url,
      pid: processPid(ctx, name),
      next: () => validateViaGateway(platform.token, tickets.next()),
    });
    const gatewayMeasure = measurer<AbVariant>(ctx, (variant) => {
      if (variant === 'direct') return { url: platform.serviceUrls.events, pid: undefined, next: () => validateSigned(ctx, tickets.next()) };
      if (variant === 'passthrough') return { url: passthrough.url, pid: passthrough.child.pid, next: () => validateSigned(ctx, tickets.next()) };
      return gatewayNamed(variant === 'gateway' ? 'gateway' : b);
    });
    const measure = async (variant: AbVariant, connections: number, durationS: number, round: number): Promise<AbRun> => {
      const before = cpuTimeMs(redisPid);
      const run = await gatewayMeasure(variant, connections, durationS, round);
      return { ...run, redisCpuUsPerRequest: ((cpuTimeMs(redisPid) - before) * 1000) / run.ok };
    };
    const runs = await interleavedRounds(ctx, measure, ['direct', 'passthrough', 'gateway', 'gateway-b'], plan);

    const summary = plan.connections.map((connections): AbSummary => {
      const mine = runs.filter((r) => r.connections === connections && r.round > 0);
      const rounds = [...new Set(mine.map((r) => r.round))];
      const at = (variant: AbVariant, round: number) => mine.find((r) => r.variant === variant && r.round === round)!;
      const perRound = (f: (round: number) => number) => spread(rounds.map(f));
      const cpu = (variant: AbVariant) => median(mine.filter((r) => r.variant === variant).map((r) => r.proxyCpuUsPerRequest));
      const redis = (variant: AbVariant) => median(mine.filter((r) => r.variant === variant).map((r) => r.redisCpuUsPerRequest));
      return {
        connections,
        vsDirect: {
          passthrough: perRound((r) => at('passthrough', r).rps / at('direct', r).rps),
          gateway: perRound((r) => at('gateway', r).rps / at('direct', r).rps),
          'gateway-b': perRound((r) => at('gateway-b', r).rps / at('direct', r).rps),
        },
        bOverA: perRound((r) => at('gateway-b', r).rps / at('gateway', r).rps),
        cpuVsPassthrough: {
          gateway: perRound((r) => at('gateway', r).proxyCpuUsPerRequest / at('passthrough', r).proxyCpuUsPerRequest),
          'gateway-b': perRound((r) => at('gateway-b', r).proxyCpuUsPerRequest / at('passthrough', r).proxyCpuUsPerRequest),
        },
        cpuUsPerRequest: { passthrough: cpu('passthrough'), gateway: cpu('gateway'), 'gateway-b': cpu('gateway-b') },
        redisCpuUsPerRequest: { gateway: redis('gateway'), 'gateway-b': redis('gateway-b') },
      };
    });
    return { bEnv, runs, summary };
  } finally {
    await passthrough.stop();
    await platform.kill(b, 'SIGTERM');
  }
}
