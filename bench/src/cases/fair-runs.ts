import { neighbourP99Bound } from '@platform/testing';
import { benchWorkspace, callService, inParallel, type BenchContext, type BenchIdentity } from '../context';
import { percentile, sleep } from '../stats';

export interface FairRunsPlan {
  /** Pipelines of workspace A, each on an interval schedule of 1 s. */
  pipelines: number;
  /** Records of each run of A: a worker slot stays taken this long. */
  records: number;
  /** Paired rounds; each has a phase with A's schedules ticking and one without, the order alternating. */
  rounds: number;
  /** B's runs triggered one after the other in each phase... */
  samplesPerPhase: number;
  /** ...or fewer, when the phase has lasted this long (a starved B takes seconds a run). */
  phaseCapS: number;
  /** Ticks of A before B starts measuring, so A's queue is full. */
  warmUpS: number;
}

export interface FairRunsPhase {
  round: number;
  flood: boolean;
  samples: number;
  /** B's run: created_at (API) → started_at (worker), server timestamps only. */
  p50Ms: number;
  p99Ms: number;
}

export interface FairRunsResults {
  pipelines: number;
  records: number;
  phases: FairRunsPhase[];
  /** Every sample of B pooled over the rounds, without and with A's schedules. */
  quiet: { samples: number; p50Ms: number; p99Ms: number };
  flood: { samples: number; p50Ms: number; p99Ms: number };
  /** Per round, B's p50 with the flood over its p50 without. */
  p50RatioPerRound: number[];
  /** How long A's runs that started during the flood phases held a worker slot (read once drained; runs of one attempt: a retry's backoff frees the slot), and how many started per second. */
  aRunP99Ms: number;
  aRunsPerS: number;
  /** neighbourP99Bound(quiet p99, A's run p99): B's p99 with the flood must stay under it. */
  boundMs: number;
}

const ENDED = ['succeeded', 'failed', 'cancelled'];

async function createPipelines(ctx: BenchContext, as: BenchIdentity, count: number, records: number, schedule: unknown): Promise<string[]> {
  return inParallel(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => {
      const res = await callService(
        ctx,
        'pipelines',
        'POST',
        '/pipelines',
        {
          name: `bench fair ${i}`,
          source: { connector: 'sample', config: { records, seed: i } },
          destination: { connector: 'postgres', config: { table: 'bench_fair' } },
          schedule,
        },
        as,
      );
      if (res.status !== 201) throw new Error(`create pipeline: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
  );
}

/** A's schedules tick (resumed as the API resumes: the next tick one interval after now) or stop; the bench's shortcut past 1,000 API calls. */
async function setFlood(ctx: BenchContext, a: BenchIdentity, on: boolean): Promise<void> {
  if (on) {
    await ctx.db.pipelines.query(
      `UPDATE pipelines SET status = 'active', schedule_anchor_at = now(), next_run_at = now() + interval '1 second' WHERE workspace_id = $1`,
      [a.workspaceId],
    );
    return;
  }
  await ctx.db.pipelines.query(`UPDATE pipelines SET status = 'paused', next_run_at = NULL WHERE workspace_id = $1`, [a.workspaceId]);
  // Runs already queued end on their own; the quiet phase starts when none is left.
  for (const deadline = Date.now() + 300_000; ;) {
    const { rows } = await ctx.db.pipelines.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE workspace_id = $1 AND status IN ('queued', 'running')`, [
      a.workspaceId,
    ]);
    if (Number(rows[0]!.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.n} runs of A still active 300 s after its schedules were paused`);
    await sleep(250);
  }
}

/** One run of B by hand: created_at → started_at, once it has ended (its pipeline is then free for the next). */
async function runOfB(ctx: BenchContext, b: BenchIdentity, pipelineId: string): Promise<number> {
  const res = await callService(ctx, 'pipelines', 'POST', `/pipelines/${pipelineId}/runs`, { trigger: 'manual' }, b);
  if (res.status !== 202) throw new Error(`trigger: ${res.status} ${JSON.stringify(res.body)}`);
  for (const deadline = Date.now() + 120_000; ;) {
    const { rows } = await ctx.db.pipelines.query<{ status: string; created_at: Date; started_at: Date | null }>(
      'SELECT status, created_at, started_at FROM runs WHERE id = $1',
      [res.body.id],
    );
    const run = rows[0]!;
    if (ENDED.includes(run.status)) {
      if (run.status !== 'succeeded' || !run.started_at) throw new Error(`a run of B ended ${run.status}`);
      return run.started_at.getTime() - run.created_at.getTime();
    }
    if (Date.now() > deadline) throw new Error(`a run of B still ${run.status} 120 s after its trigger`);
    await sleep(20);
  }
}

async function phase(ctx: BenchContext, b: BenchIdentity, pipelineId: string, plan: FairRunsPlan): Promise<number[]> {
  const samples: number[] = [];
  const cap = Date.now() + plan.phaseCapS * 1000;
  while (samples.length < plan.samplesPerPhase && Date.now() < cap) samples.push(await runOfB(ctx, b, pipelineId));
  return samples.sort((x, y) => x - y);
}

/**
 * Fair runs (contract section 20, issue 27): workspace A with many pipelines on 1 s schedules
 * (quotas raised for it, as an operator would), workspace B triggering runs by hand. In paired
 * rounds B's trigger-to-start is measured with A's schedules ticking and without, the order
 * alternating; with fair taking B waits for one run of A to end at most, never for A's queue.
 */
export async function fairRunsCase(ctx: BenchContext, plan: FairRunsPlan): Promise<FairRunsResults> {
  const { log, db } = ctx;
  const a = await benchWorkspace(ctx, 'bench fair A', { pipelines: plan.pipelines, scheduled_pipelines: plan.pipelines, webhook_endpoints: 20 });
  const b = await benchWorkspace(ctx, 'bench fair B');
  log(`workspace A: ${plan.pipelines} pipelines every 1 s (${plan.records} records a run); workspace B: runs by hand`);
  await createPipelines(ctx, a, plan.pipelines, plan.records, { type: 'interval', every_seconds: 1 });
  await setFlood(ctx, a, false);
  const [bPipeline] = await createPipelines(ctx, b, 1, 5, null);
  await runOfB(ctx, b, bPipeline!); // its destination table exists from here on

  const phases: FairRunsPhase[] = [];
  const pooled = { quiet: [] as number[], flood: [] as number[] };
  const floodWindows: [Date, Date][] = [];
  for (let round = 1; round <= plan.rounds; round++) {
    for (const flood of round % 2 ? [true, false] : [false, true]) {
      if (flood) {
        await setFlood(ctx, a, true);
        await sleep(plan.warmUpS * 1000);
      }
      const from = new Date();
      const samples = await phase(ctx, b, bPipeline!, plan);
      if (flood) {
        floodWindows.push([from, new Date()]);
        await setFlood(ctx, a, false);
      }
      pooled[flood ? 'flood' : 'quiet'].push(...samples);
      const result = { round, flood, samples: samples.length, p50Ms: percentile(samples, 0.5), p99Ms: percentile(samples, 0.99) };
      phases.push(result);
      log(
        `  round ${round} ${flood ? 'with A ticking ' : 'without A     '}: B's trigger-to-start p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms (${samples.length} runs)`,
      );
    }
  }

  const durations: number[] = [];
  let aRuns = 0;
  let floodSeconds = 0;
  for (const [from, to] of floodWindows) {
    const { rows } = await db.pipelines.query<{ ms: string }>(
      `SELECT (extract(epoch FROM finished_at - started_at) * 1000)::bigint AS ms FROM runs
        WHERE workspace_id = $1 AND started_at BETWEEN $2 AND $3 AND finished_at IS NOT NULL AND attempts = 1`,
      [a.workspaceId, from, to],
    );
    durations.push(...rows.map((r) => Number(r.ms)));
    aRuns += rows.length;
    floodSeconds += (to.getTime() - from.getTime()) / 1000;
  }
  durations.sort((x, y) => x - y);
  const summary = (values: number[]) => {
    const sorted = [...values].sort((x, y) => x - y);
    return { samples: sorted.length, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) };
  };
  const quiet = summary(pooled.quiet);
  const aRunP99Ms = percentile(durations, 0.99);
  const rounds = [...new Set(phases.map((p) => p.round))];
  const at = (round: number, flood: boolean) => phases.find((p) => p.round === round && p.flood === flood)!;
  return {
    pipelines: plan.pipelines,
    records: plan.records,
    phases,
    quiet,
    flood: summary(pooled.flood),
    p50RatioPerRound: rounds.map((r) => at(r, true).p50Ms / at(r, false).p50Ms),
    aRunP99Ms,
    aRunsPerS: floodSeconds > 0 ? aRuns / floodSeconds : Number.NaN,
    boundMs: neighbourP99Bound(quiet.p99Ms, Number.isFinite(aRunP99Ms) ? aRunP99Ms : 0),
  };
}
