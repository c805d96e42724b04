import { performance } from 'node:perf_hooks';
import { benchWorkspace, callService, inParallel, signed, type BenchContext, type BenchIdentity } from '../context';
import { lossVerdict, spread, type LossVerdict, type Spread } from '../spread';
import { median } from '../stats';

export interface CronListPlan {
  /** Paired rounds; the order of the variants rotates every round. */
  rounds: number;
  /** Sequential lists of each variant per round. */
  listsPerRound: number;
}

type Variant = 'cron' | 'plain' | 'plain2';

export interface CronListResults {
  pipelines: number;
  /** Each round's median latency of GET /pipelines?limit=100, per variant. */
  medianMs: Record<Variant, Spread>;
  /** Per round: 100 cron pipelines over 100 unscheduled ones; and a second unscheduled workspace over the first (the rounds' own noise). */
  cronOverPlain: Spread;
  plainOverPlain: Spread;
  verdict: LossVerdict;
}

const PIPELINES = 100;

/** Crons of every kind a renderer could search for: frequent, weekdays in a DST zone, a DST gap, once a year, once in four years. */
const CRONS = [
  { cron: '*/5 * * * *', timezone: 'UTC' },
  { cron: '0 9 * * MON-FRI', timezone: 'Europe/Berlin' },
  { cron: '30 2 * * *', timezone: 'America/New_York' },
  { cron: '0 0 1 JAN *', timezone: 'Asia/Kolkata' },
  { cron: '0 0 29 2 *', timezone: 'Pacific/Chatham' },
];

async function workspaceWith(ctx: BenchContext, variant: Variant): Promise<BenchIdentity> {
  const as = await benchWorkspace(ctx, `bench cron-list ${variant}`);
  await inParallel(
    Array.from({ length: PIPELINES }, (_, i) => i),
    8,
    async (i) => {
      const schedule = variant === 'cron' ? { type: 'cron', ...CRONS[i % CRONS.length]! } : null;
      const res = await callService(
        ctx,
        'pipelines',
        'POST',
        '/pipelines',
        {
          name: `bench ${variant} ${i}`,
          source: { connector: 'sample', config: {} },
          destination: { connector: 'postgres', config: { table: 'bench_cron' } },
          schedule,
        },
        as,
      );
      if (res.status !== 201) throw new Error(`create pipeline: ${res.status} ${JSON.stringify(res.body)}`);
    },
  );
  return as;
}

/** One GET /pipelines?limit=100 straight to the service: ms until the whole body is in. */
async function timedList(ctx: BenchContext, as: BenchIdentity, variant: Variant): Promise<number> {
  const path = '/pipelines?limit=100';
  const started = performance.now();
  const res = await fetch(`${ctx.platform.serviceUrls.pipelines}${path}`, { headers: signed(ctx, 'pipelines', 'GET', path, undefined, as) });
  const text = await res.text();
  const ms = performance.now() - started;
  const data = (JSON.parse(text) as { data?: { schedule: unknown }[] }).data ?? [];
  const scheduled = data.filter((p) => p.schedule !== null).length;
  if (res.status !== 200 || data.length !== PIPELINES || scheduled !== (variant === 'cron' ? PIPELINES : 0)) {
    throw new Error(`GET /pipelines?limit=100 (${variant}): ${res.status}, ${data.length} pipelines, ${scheduled} scheduled`);
  }
  return ms;
}

/**
 * Rendering costs the same whatever the resource's history (contract section 20): a list of 100
 * cron pipelines against a list of 100 unscheduled ones, in paired rounds whose order rotates,
 * with a second unscheduled workspace as the rounds' own noise. The ratio should be ~1.0.
 */
export async function cronListCase(ctx: BenchContext, plan: CronListPlan): Promise<CronListResults> {
  const variants: Variant[] = ['cron', 'plain', 'plain2'];
  ctx.log(`three workspaces of ${PIPELINES} pipelines: cron, unscheduled, unscheduled`);
  const workspaces = {} as Record<Variant, BenchIdentity>;
  for (const variant of variants) workspaces[variant] = await workspaceWith(ctx, variant);
  // Warm-up: the first lists of each pay for connections and JIT.
  for (const variant of variants) for (let i = 0; i < 10; i++) await timedList(ctx, workspaces[variant], variant);

  const perRound: Record<Variant, number[]> = { cron: [], plain: [], plain2: [] };
  for (let round = 0; round < plan.rounds; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const variant of order) {
      const times: number[] = [];
      for (let i = 0; i < plan.listsPerRound; i++) times.push(await timedList(ctx, workspaces[variant], variant));
      perRound[variant].push(median(times));
    }
    ctx.log(
      `  round ${round + 1}: median ms cron ${perRound.cron.at(-1)!.toFixed(2)}, unscheduled ${perRound.plain.at(-1)!.toFixed(2)} / ${perRound.plain2.at(-1)!.toFixed(2)}`,
    );
  }
  const ratio = (top: Variant) => spread(perRound[top].map((v, i) => v / perRound.plain[i]!));
  const cronOverPlain = ratio('cron');
  const plainOverPlain = ratio('plain2');
  return {
    pipelines: PIPELINES,
    medianMs: { cron: spread(perRound.cron), plain: spread(perRound.plain), plain2: spread(perRound.plain2) },
    cronOverPlain,
    plainOverPlain,
    verdict: lossVerdict('list latency, cron / unscheduled', cronOverPlain, plainOverPlain, false),
  };
}
