import { callService, type BenchContext } from '../context';
import { median, percentile, sleep } from '../stats';

export interface RunLinePlan {
  /** Triggers sent, evenly spread over `spreadS` seconds. */
  triggers: number;
  spreadS: number;
  /** Records per run (sample source). */
  records: number;
}

export interface RunLineResults {
  triggers: number;
  spreadS: number;
  records: number;
  /** 202 answers: the first run `queued` at once, the others `pending` behind it (or `queued` when the line was empty). */
  accepted: { queued: number; pending: number };
  /** 409 too_many_pending: the line already held 20 pending runs. */
  refusedTooManyPending: number;
  /** Other answers (should be 0). */
  otherAnswers: number;
  /** The other answers by status and error code. */
  otherByKind: Record<string, number>;
  succeeded: number;
  /** Hand-overs: a run that was waiting when the run before it ended; previous finished_at → its started_at. */
  handoffs: number;
  handoffP50Ms: number;
  handoffP99Ms: number;
  handoffMaxMs: number;
  /** Runs that started before the run before them (in trigger order) had ended. Must be 0. */
  overlaps: number;
  /** Runs that started out of trigger order (created_at, id). Must be 0. */
  outOfOrder: number;
  /** The runs' own duration (started_at → finished_at), p50. */
  runP50Ms: number;
}

/**
 * Contract section 19 under load: one pipeline with `concurrency_policy: "enqueue"`, `triggers`
 * triggers spread evenly over `spreadS` s (straight to the pipelines service, signed as the gateway
 * signs: the gateway's 100 per minute run-trigger limit would otherwise answer most of them 429).
 * Each run that waited gets its turn when the run before it ends: the hand-over (previous
 * finished_at → started_at, server-side timestamps only) is the cost of the pending line (the
 * promotion, the admission, the job add, a worker's pick-up). Overlaps and order are counted from
 * the database.
 */
export async function runLineCase(ctx: BenchContext, plan: RunLinePlan): Promise<RunLineResults> {
  const created = await callService(ctx, 'pipelines', 'POST', '/pipelines', {
    name: 'bench run line',
    source: { connector: 'sample', config: { records: plan.records, seed: 19 } },
    destination: { connector: 'postgres', config: { table: 'bench_run_line' } },
    concurrency_policy: 'enqueue',
  });
  if (created.status !== 201) throw new Error(`create pipeline: ${created.status} ${JSON.stringify(created.body)}`);
  const pipelineId = created.body.id as string;

  const gapMs = (plan.spreadS * 1000) / plan.triggers;
  const start = Date.now();
  const answers = await Promise.all(
    Array.from({ length: plan.triggers }, async (_, i) => {
      await sleep(Math.max(0, start + i * gapMs - Date.now()));
      return callService(ctx, 'pipelines', 'POST', `/pipelines/${pipelineId}/runs`, { trigger: 'manual' });
    }),
  );
  const accepted = answers.filter((a) => a.status === 202);
  const refused = answers.filter((a) => a.status === 409 && a.body?.error?.errors?.[0]?.code === 'too_many_pending').length;
  ctx.log(
    `run line: ${accepted.length} accepted, ${refused} refused (too_many_pending) in ${((Date.now() - start) / 1000).toFixed(1)} s; waiting for the runs to end`,
  );

  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const { rows } = await ctx.db.pipelines.query<{ open: string }>(
      `SELECT count(*) AS open FROM runs WHERE pipeline_id = $1 AND status IN ('pending', 'queued', 'running')`,
      [pipelineId],
    );
    if (Number(rows[0]!.open) === 0) break;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.open} runs of the line did not end within 10 minutes`);
    await sleep(250);
  }

  const { rows: runs } = await ctx.db.pipelines.query<{ status: string; created_at: Date; started_at: Date | null; finished_at: Date | null }>(
    'SELECT status, created_at, started_at, finished_at FROM runs WHERE pipeline_id = $1 ORDER BY created_at, id',
    [pipelineId],
  );
  const handoffs: number[] = [];
  let overlaps = 0;
  let outOfOrder = 0;
  for (let i = 1; i < runs.length; i++) {
    const [before, run] = [runs[i - 1]!, runs[i]!];
    if (!run.started_at || !before.started_at || !before.finished_at) continue;
    if (run.started_at < before.finished_at) overlaps++;
    if (run.started_at < before.started_at) outOfOrder++;
    // A run that was waiting when the one before it ended (else its start waited for its own trigger).
    if (run.created_at < before.finished_at) handoffs.push(run.started_at.getTime() - before.finished_at.getTime());
  }
  handoffs.sort((a, b) => a - b);
  const durations = runs.filter((r) => r.started_at && r.finished_at).map((r) => r.finished_at!.getTime() - r.started_at!.getTime());
  return {
    triggers: plan.triggers,
    spreadS: plan.spreadS,
    records: plan.records,
    accepted: {
      queued: accepted.filter((a) => a.body.status === 'queued').length,
      pending: accepted.filter((a) => a.body.status === 'pending').length,
    },
    refusedTooManyPending: refused,
    otherAnswers: answers.length - accepted.length - refused,
    otherByKind: answers
      .filter((a) => a.status !== 202 && !(a.status === 409 && a.body?.error?.errors?.[0]?.code === 'too_many_pending'))
      .reduce<Record<string, number>>((kinds, a) => {
        const kind = `${a.status} ${a.body?.error?.code ?? ''} ${a.body?.error?.message ?? ''}`.trim();
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        return kinds;
      }, {}),
    succeeded: runs.filter((r) => r.status === 'succeeded').length,
    handoffs: handoffs.length,
    handoffP50Ms: percentile(handoffs, 0.5),
    handoffP99Ms: percentile(handoffs, 0.99),
    handoffMaxMs: handoffs.at(-1) ?? Number.NaN,
    overlaps,
    outOfOrder,
    runP50Ms: median(durations),
  };
}
