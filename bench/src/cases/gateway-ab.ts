import type { BenchContext } from '../context';
import type { RefBuild } from '../ref-build';
import { cpuTimeMs } from '../proc';
import { lossVerdict, spread, type LossVerdict, type Spread } from '../spread';
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

/** `gateway` is A; `gateway-a2` a second A (the A-vs-A spread); `gateway-b` is B. */
export type AbGateway = 'gateway' | 'gateway-a2' | 'gateway-b';
type AbVariant = 'direct' | 'passthrough' | 'passthrough-redis' | AbGateway;

export interface AbRun extends ProxyRun {
  variant: AbVariant;
  /** CPU of the bench's redis-server per 2xx answer, µs. */
  redisCpuUsPerRequest: number;
}

export interface AbSummary {
  connections: number;
  /** Throughput vs the direct call in the same round. */
  vsDirect: { passthrough: Spread; gateway: Spread; 'gateway-b': Spread; 'gateway-a2'?: Spread };
  /** Per round, B's throughput over A's. */
  bOverA: Spread;
  /** Per round, B's CPU per request over A's. */
  cpuBOverA: Spread;
  /** Per round, the second A's throughput and CPU per request over A's (when a second A ran). */
  a2OverA?: Spread;
  cpuA2OverA?: Spread;
  /** Per round, each gateway's (and the Redis floor's, when it ran) CPU per request over the pass-through's. */
  cpuVsPassthrough: Record<'gateway' | 'gateway-b', Spread> & { 'passthrough-redis'?: Spread };
  /** Medians, µs per request. */
  cpuUsPerRequest: Record<'passthrough' | 'gateway' | 'gateway-b', number> & { 'passthrough-redis'?: number };
  redisCpuUsPerRequest: Record<'gateway' | 'gateway-b', number>;
  verdict: { throughput: LossVerdict; cpu: LossVerdict };
}

export interface AbSetup {
  /** Variables on top of the platform's for B. */
  bEnv: Record<string, string>;
  /** A (and the second A) from another commit's build (`--a-ref`) instead of the platform's own gateway. */
  a?: RefBuild;
  /** A second A in the same rounds: A2 over A per round is the spread two identical gateways show. */
  secondA?: boolean;
  /** The token each gateway's requests carry (default: the platform's key for all). */
  tokens?: Partial<Record<AbGateway, string>>;
  /** Appended to the names of the gateways this A/B adds, so a second A/B of the same platform can add its own. */
  nameSuffix?: string;
  /**
   * Also runs the pass-through with the exact limiter's one Redis call before forwarding
   * (`passthrough-redis`): the floor of any proxy that asks Redis once per request.
   */
  redisFloor?: boolean;
  /** Called once every gateway answers, before the warm-up. */
  atStart?: (gateways: Record<AbGateway, { url: string; token: string } | undefined>) => Promise<void>;
}

export interface AbResults {
  bEnv: Record<string, string>;
  /** The build A ran from, when not the checkout's own. */
  a?: { ref: string; sha: string };
  runs: AbRun[];
  /** Answers each variant gave, warm-up included (2xx and others). */
  answers: Partial<Record<AbVariant, number>>;
  summary: AbSummary[];
}

/**
 * A/B of a gateway setting or of two builds: gateway A (the platform's, or another commit's build
 * with `setup.a`) and a gateway of this checkout started with `bEnv` on top (B), optionally a
 * second A, with the direct call and the pass-through in the same rounds, interleaved.
 * `npm run bench -- --only=gateway-ab --b-env=NAME=value,... [--a-ref=REF]`.
 */
export async function gatewayAbCase(ctx: BenchContext, plan: Omit<ProxyPlan, 'profileS'>, setup: AbSetup, redisPid: number | undefined): Promise<AbResults> {
  const { platform } = ctx;
  const tickets = await ticketSupply(ctx, plan.tickets);
  const gateways: AbGateway[] = setup.secondA ? ['gateway', 'gateway-a2', 'gateway-b'] : ['gateway', 'gateway-b'];
  const added: string[] = [];
  const passthrough = await startVariant(ctx, 'passthrough');
  const floor = setup.redisFloor ? await startVariant(ctx, 'passthrough', [], { VARIANT_REDIS_CALL: '1' }) : undefined;
  try {
    const processes = {} as Record<AbGateway, string>;
    for (const gateway of gateways) {
      const root = gateway === 'gateway-b' ? undefined : setup.a?.root;
      // Without another build, A is the platform's own gateway.
      if (gateway === 'gateway' && !root) processes.gateway = 'gateway';
      else {
        const name = `${gateway === 'gateway' ? 'gateway-a' : gateway}${setup.nameSuffix ?? ''}`;
        processes[gateway] = await platform.add({ kind: 'gateway', name, root, env: gateway === 'gateway-b' ? setup.bEnv : {} });
        added.push(name);
      }
    }
    const urlOf = (gateway: AbGateway) => platform.processes().find((p) => p.name === processes[gateway])!.url;
    const tokenOf = (gateway: AbGateway) => setup.tokens?.[gateway] ?? platform.token;
    await setup.atStart?.({
      gateway: { url: urlOf('gateway'), token: tokenOf('gateway') },
      'gateway-a2': setup.secondA ? { url: urlOf('gateway-a2'), token: tokenOf('gateway-a2') } : undefined,
      'gateway-b': { url: urlOf('gateway-b'), token: tokenOf('gateway-b') },
    });
    const gatewayMeasure = measurer<AbVariant>(ctx, (variant) => {
      if (variant === 'direct') return { url: platform.serviceUrls.events, pid: undefined, next: () => validateSigned(ctx, tickets.next()) };
      if (variant === 'passthrough') return { url: passthrough.url, pid: passthrough.child.pid, next: () => validateSigned(ctx, tickets.next()) };
      if (variant === 'passthrough-redis') return { url: floor!.url, pid: floor!.child.pid, next: () => validateSigned(ctx, tickets.next()) };
      const token = tokenOf(variant);
      return { url: urlOf(variant), pid: processPid(ctx, processes[variant]), next: () => validateViaGateway(token, tickets.next()) };
    });
    const answers: AbResults['answers'] = {};
    const measure = async (variant: AbVariant, connections: number, durationS: number, round: number): Promise<AbRun> => {
      const before = cpuTimeMs(redisPid);
      const run = await gatewayMeasure(variant, connections, durationS, round);
      answers[variant] = (answers[variant] ?? 0) + run.ok + run.non2xx;
      return { ...run, redisCpuUsPerRequest: ((cpuTimeMs(redisPid) - before) * 1000) / run.ok };
    };
    const passthroughs: AbVariant[] = floor ? ['passthrough', 'passthrough-redis'] : ['passthrough'];
    const runs = await interleavedRounds(ctx, measure, ['direct', ...passthroughs, ...gateways], plan);
    const summary = plan.connections.map((connections) => summarize(runs, connections, setup.secondA ?? false, floor !== undefined));
    const rounds = (r: Spread) => r.rounds.map((v) => v.toFixed(2)).join(' ');
    for (const s of summary) {
      ctx.log(`c=${s.connections} B/A per round: throughput ${rounds(s.bOverA)}; CPU per request ${rounds(s.cpuBOverA)}`);
      if (s.a2OverA && s.cpuA2OverA) ctx.log(`c=${s.connections} A2/A per round: throughput ${rounds(s.a2OverA)}; CPU per request ${rounds(s.cpuA2OverA)}`);
      ctx.log(`c=${s.connections} ${s.verdict.throughput.text}; ${s.verdict.cpu.text}`);
    }
    return { bEnv: setup.bEnv, ...(setup.a ? { a: { ref: setup.a.ref, sha: setup.a.sha } } : {}), runs, answers, summary };
  } finally {
    await passthrough.stop();
    await floor?.stop();
    for (const name of added) await platform.kill(name, 'SIGTERM');
  }
}

function summarize(runs: AbRun[], connections: number, secondA: boolean, redisFloor: boolean): AbSummary {
  const mine = runs.filter((r) => r.connections === connections && r.round > 0);
  const rounds = [...new Set(mine.map((r) => r.round))];
  const at = (variant: AbVariant, round: number) => mine.find((r) => r.variant === variant && r.round === round)!;
  const perRound = (f: (round: number) => number) => spread(rounds.map(f));
  const rpsOver = (top: AbVariant, bottom: AbVariant) => perRound((r) => at(top, r).rps / at(bottom, r).rps);
  const cpuOver = (top: AbVariant, bottom: AbVariant) => perRound((r) => at(top, r).proxyCpuUsPerRequest / at(bottom, r).proxyCpuUsPerRequest);
  const cpu = (variant: AbVariant) => median(mine.filter((r) => r.variant === variant).map((r) => r.proxyCpuUsPerRequest));
  const redis = (variant: AbVariant) => median(mine.filter((r) => r.variant === variant).map((r) => r.redisCpuUsPerRequest));
  const bOverA = rpsOver('gateway-b', 'gateway');
  const cpuBOverA = cpuOver('gateway-b', 'gateway');
  const a2OverA = secondA ? rpsOver('gateway-a2', 'gateway') : undefined;
  const cpuA2OverA = secondA ? cpuOver('gateway-a2', 'gateway') : undefined;
  return {
    connections,
    vsDirect: {
      passthrough: rpsOver('passthrough', 'direct'),
      gateway: rpsOver('gateway', 'direct'),
      'gateway-b': rpsOver('gateway-b', 'direct'),
      ...(secondA ? { 'gateway-a2': rpsOver('gateway-a2', 'direct') } : {}),
    },
    bOverA,
    cpuBOverA,
    ...(secondA ? { a2OverA, cpuA2OverA } : {}),
    cpuVsPassthrough: {
      gateway: cpuOver('gateway', 'passthrough'),
      'gateway-b': cpuOver('gateway-b', 'passthrough'),
      ...(redisFloor ? { 'passthrough-redis': cpuOver('passthrough-redis', 'passthrough') } : {}),
    },
    cpuUsPerRequest: {
      passthrough: cpu('passthrough'),
      gateway: cpu('gateway'),
      'gateway-b': cpu('gateway-b'),
      ...(redisFloor ? { 'passthrough-redis': cpu('passthrough-redis') } : {}),
    },
    redisCpuUsPerRequest: { gateway: redis('gateway'), 'gateway-b': redis('gateway-b') },
    verdict: {
      throughput: lossVerdict('throughput', bOverA, a2OverA, true),
      cpu: lossVerdict('CPU per request', cpuBOverA, cpuA2OverA, false),
    },
  };
}
