import { callService, inParallel, type BenchContext } from '../context';
import { percentile, sleep } from '../stats';

export interface SchedulesPlan {
  pipelines: number;
  everySeconds: number;
  /** How long ticks are counted, once every pipeline has its schedule. */
  windowS: number;
  /** Records per run: small, so a run is mostly the platform's own work. */
  records: number;
}

export interface SchedulesResults {
  pipelines: number;
  everySeconds: number;
  windowS: number;
  /** Ticks that fell in the window, over every pipeline (pipelines × window / interval, give or take the edges). */
  ticksDue: number;
  /** Runs whose scheduled_for lies in the window. */
  runsCreated: number;
  /** The most runs any one (pipeline, scheduled_for) got: must be 1. */
  maxRunsPerTick: number;
  /** Runs whose scheduled_for is not anchor + k × interval of its pipeline: must be 0. */
  offGridTicks: number;
  /** Ticks that created nothing because the pipeline's previous run was still active (contract 13). */
  ticksSkippedActive: number;
  /** Runs of one pipeline that overlapped (started before the previous one finished): must be 0. */
  overlaps: number;
  /** scheduled_for → created_at: how late the scheduler inserted the tick's run. */
  tickToCreatedP50Ms: number;
  tickToCreatedP99Ms: number;
  /** scheduled_for → started_at: the tick's delay until a worker started it. */
  tickToStartedP50Ms: number;
  tickToStartedP99Ms: number;
}

async function createScheduledPipelines(ctx: BenchContext, plan: SchedulesPlan): Promise<string[]> {
  return inParallel(
    Array.from({ length: plan.pipelines }, (_, i) => i),
    8,
    async (i) => {
      const res = await callService(ctx, 'pipelines', 'POST', '/pipelines', {
        name: `bench schedule ${i}`,
        source: { connector: 'sample', config: { records: plan.records, seed: i } },
        destination: { connector: 'postgres', config: { table: 'bench_scheduled' } },
        schedule: { type: 'interval', every_seconds: plan.everySeconds },
      });
      if (res.status !== 201) throw new Error(`create pipeline: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
  );
}

/**
 * Many pipelines on short intervals, ticked by the workers' schedulers for a minute: every tick
 * must create at most one run (the database refuses a second), exactly on the schedule's grid,
 * and none while the pipeline's previous run is active; the figures are how late ticks are
 * turned into runs and started. Pipelines are created straight at the service, signed as the
 * gateway signs (the gateway's limit of 300 requests a minute would pace the setup).
 */
export async function schedulesCase(ctx: BenchContext, plan: SchedulesPlan): Promise<SchedulesResults> {
  const { log, db } = ctx;
  log(`creating ${plan.pipelines} pipelines, each every ${plan.everySeconds} s`);
  const ids = await createScheduledPipelines(ctx, plan);
  const from = new Date();
  log(`counting ticks for ${plan.windowS} s`);
  await sleep(plan.windowS * 1000);
  const to = new Date();
  // Pausing stops the ticks (next_run_at null); runs in flight end on their own.
  await db.pipelines.query(`UPDATE pipelines SET status = 'paused', next_run_at = NULL WHERE id = ANY($1::uuid[])`, [ids]);
  for (let waited = 0; waited < 120_000; waited += 250) {
    const { rows } = await db.pipelines.query<{ n: string }>(
      `SELECT count(*) AS n FROM runs WHERE pipeline_id = ANY($1::uuid[]) AND status IN ('queued', 'running')`,
      [ids],
    );
    if (Number(rows[0]!.n) === 0) break;
    await sleep(250);
  }

  const { rows: runs } = await db.pipelines.query<{
    pipeline_id: string;
    scheduled_for: Date;
    created_at: Date;
    started_at: Date | null;
    finished_at: Date | null;
    anchor: Date;
  }>(
    `SELECT r.pipeline_id, r.scheduled_for, r.created_at, r.started_at, r.finished_at, p.schedule_anchor_at AS anchor
       FROM runs r JOIN pipelines p ON p.id = r.pipeline_id
      WHERE r.pipeline_id = ANY($1::uuid[]) AND r.scheduled_for IS NOT NULL
      ORDER BY r.pipeline_id, r.scheduled_for`,
    [ids],
  );
  const inWindow = runs.filter((r) => r.scheduled_for >= from && r.scheduled_for < to);
  const perTick = new Map<string, number>();
  for (const r of runs) {
    const key = `${r.pipeline_id} ${r.scheduled_for.toISOString()}`;
    perTick.set(key, (perTick.get(key) ?? 0) + 1);
  }
  const intervalMs = plan.everySeconds * 1000;
  // Interval ticks are the schedule's anchor (when it was set) + k × interval.
  const offGrid = runs.filter((r) => (r.scheduled_for.getTime() - r.anchor.getTime()) % intervalMs !== 0).length;
  let overlaps = 0;
  for (let i = 1; i < runs.length; i++) {
    const [previous, run] = [runs[i - 1]!, runs[i]!];
    if (previous.pipeline_id === run.pipeline_id && run.started_at && previous.finished_at && run.started_at < previous.finished_at) overlaps++;
  }
  const { rows: anchors } = await db.pipelines.query<{ anchor: Date }>('SELECT schedule_anchor_at AS anchor FROM pipelines WHERE id = ANY($1::uuid[])', [ids]);
  // Ticks anchor + k × interval (k ≥ 1) inside [from, to) of each pipeline.
  const ticksDue = anchors.reduce((sum, { anchor }) => {
    const first = Math.max(1, Math.ceil((from.getTime() - anchor.getTime()) / intervalMs));
    const last = Math.ceil((to.getTime() - anchor.getTime()) / intervalMs) - 1;
    return sum + Math.max(0, last - first + 1);
  }, 0);
  const sorted = (values: number[]) => values.sort((a, b) => a - b);
  const toCreated = sorted(inWindow.map((r) => r.created_at.getTime() - r.scheduled_for.getTime()));
  const toStarted = sorted(inWindow.filter((r) => r.started_at).map((r) => r.started_at!.getTime() - r.scheduled_for.getTime()));
  const result: SchedulesResults = {
    pipelines: plan.pipelines,
    everySeconds: plan.everySeconds,
    windowS: plan.windowS,
    ticksDue,
    runsCreated: inWindow.length,
    maxRunsPerTick: Math.max(0, ...perTick.values()),
    offGridTicks: offGrid,
    ticksSkippedActive: ticksDue - inWindow.length,
    overlaps,
    tickToCreatedP50Ms: percentile(toCreated, 0.5),
    tickToCreatedP99Ms: percentile(toCreated, 0.99),
    tickToStartedP50Ms: percentile(toStarted, 0.5),
    tickToStartedP99Ms: percentile(toStarted, 0.99),
  };
  log(
    `  ${result.ticksDue} ticks due, ${result.runsCreated} runs, at most ${result.maxRunsPerTick} per tick, ${result.offGridTicks} off the grid, ` +
      `${result.overlaps} overlaps; tick → created p50 ${result.tickToCreatedP50Ms} ms p99 ${result.tickToCreatedP99Ms} ms, ` +
      `tick → started p50 ${result.tickToStartedP50Ms} ms p99 ${result.tickToStartedP99Ms} ms`,
  );
  return result;
}
