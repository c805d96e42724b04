import { callService, inParallel, type BenchContext } from '../context';
import { median, percentile, sleep } from '../stats';

export interface RunsPlan {
  /** Sequential triggers for the start latency. */
  latencySamples: number;
  latencyGapMs: number;
  /** Runs per throughput round. */
  runsPerRound: number;
  rounds: number;
  /** Records per sample run. */
  records: number;
}

export interface ThroughputRound {
  workers: number;
  round: number;
  /** Runs that finished after every worker was ready (the ones counted). */
  runs: number;
  succeeded: number;
  seconds: number;
  runsPerMinute: number;
}

export interface RunsResults {
  workerConcurrency: number;
  records: number;
  latency: {
    samples: number;
    /** 202 received by the client → started_at written by the worker. */
    fromAcceptedP50Ms: number;
    fromAcceptedP99Ms: number;
    /** The run's created_at (API) → started_at (worker): server-side timestamps only. */
    fromCreatedP50Ms: number;
    fromCreatedP99Ms: number;
  };
  rounds: ThroughputRound[];
  runsPerMinute: Record<string, number>;
}

const ENDED = ['succeeded', 'failed', 'cancelled'];

async function createPipelines(ctx: BenchContext, count: number, records: number, label: string): Promise<string[]> {
  return inParallel(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => {
      const res = await callService(ctx, 'pipelines', 'POST', '/pipelines', {
        name: `bench ${label} ${i}`,
        source: { connector: 'sample', config: { records, seed: i } },
        destination: { connector: 'postgres', config: { table: 'bench_records' } },
      });
      if (res.status !== 201) throw new Error(`create pipeline: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
  );
}

async function trigger(ctx: BenchContext, pipelineId: string): Promise<{ id: string; acceptedAt: number }> {
  const res = await callService(ctx, 'pipelines', 'POST', `/pipelines/${pipelineId}/runs`, { trigger: 'manual' });
  if (res.status !== 202) throw new Error(`trigger: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, acceptedAt: res.at };
}

async function waitEnded(ctx: BenchContext, ids: string[], timeoutMs: number): Promise<{ started: Date; finished: Date; succeeded: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await ctx.db.pipelines.query<{ ended: string; succeeded: string; started: Date; finished: Date }>(
      `SELECT count(*) FILTER (WHERE status = ANY($2::run_status[])) AS ended, count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
              min(started_at) AS started, max(finished_at) AS finished
         FROM runs WHERE id = ANY($1::uuid[])`,
      [ids, ENDED],
    );
    const row = rows[0]!;
    if (Number(row.ended) === ids.length) return { started: row.started, finished: row.finished, succeeded: Number(row.succeeded) };
    if (Date.now() > deadline) throw new Error(`${ids.length - Number(row.ended)} of ${ids.length} runs did not end within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Start latency (one trigger at a time, to the pipelines service directly, signed as the gateway
 * signs: the gateway's run-trigger limit of 100 per minute would otherwise be the bottleneck),
 * then throughput rounds alternating one and two workers: the runs are queued while no worker
 * runs, the workers start, and the rate is runs / (last finished_at − first started_at).
 */
export async function runsCase(ctx: BenchContext, plan: RunsPlan, workerConcurrency: number): Promise<RunsResults> {
  const { platform, log } = ctx;
  log(`start latency: ${plan.latencySamples} sequential triggers`);
  const latencyPipelines = await createPipelines(ctx, plan.latencySamples, plan.records, 'latency');
  const accepted: { id: string; acceptedAt: number }[] = [];
  for (const pipelineId of latencyPipelines) {
    accepted.push(await trigger(ctx, pipelineId));
    await sleep(plan.latencyGapMs);
  }
  await waitEnded(
    ctx,
    accepted.map((a) => a.id),
    60_000,
  );
  const { rows } = await ctx.db.pipelines.query<{ id: string; created_at: Date; started_at: Date }>(
    'SELECT id, created_at, started_at FROM runs WHERE id = ANY($1::uuid[])',
    [accepted.map((a) => a.id)],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const fromAccepted = accepted.map((a) => byId.get(a.id)!.started_at.getTime() - a.acceptedAt).sort((x, y) => x - y);
  const fromCreated = rows.map((r) => r.started_at.getTime() - r.created_at.getTime()).sort((x, y) => x - y);

  const rounds: ThroughputRound[] = [];
  const workerNames = ['worker', 'worker-2'];
  await platform.add({ kind: 'worker', name: 'worker-2', env: { WORKER_CONCURRENCY: String(workerConcurrency) } });
  for (let round = 1; round <= plan.rounds; round++) {
    for (const workers of round % 2 ? [1, 2] : [2, 1]) {
      await Promise.all(workerNames.map((name) => platform.kill(name, 'SIGTERM')));
      const pipelines = await createPipelines(ctx, plan.runsPerRound, plan.records, `r${round}w${workers}`);
      const runs = await inParallel(pipelines, 8, (id) => trigger(ctx, id));
      await Promise.all(workerNames.slice(0, workers).map((name) => platform.restart(name)));
      // Counted from the moment every worker of the round is ready: a worker that is still loading
      // would otherwise count as a slow one.
      const allReady = new Date();
      const ids = runs.map((r) => r.id);
      const ended = await waitEnded(ctx, ids, 120_000);
      const { rows: after } = await ctx.db.pipelines.query<{ n: string }>('SELECT count(*) AS n FROM runs WHERE id = ANY($1::uuid[]) AND finished_at > $2', [
        ids,
        allReady,
      ]);
      const counted = Number(after[0]!.n);
      const seconds = (ended.finished.getTime() - allReady.getTime()) / 1000;
      const result = { workers, round, runs: counted, succeeded: ended.succeeded, seconds, runsPerMinute: (counted / seconds) * 60 };
      rounds.push(result);
      log(
        `  round ${round} ${workers} worker(s): ${counted} runs in ${seconds.toFixed(2)} s = ${result.runsPerMinute.toFixed(0)} runs/min (${ended.succeeded} of ${runs.length} succeeded)`,
      );
    }
  }
  return {
    workerConcurrency,
    records: plan.records,
    latency: {
      samples: fromAccepted.length,
      fromAcceptedP50Ms: percentile(fromAccepted, 0.5),
      fromAcceptedP99Ms: percentile(fromAccepted, 0.99),
      fromCreatedP50Ms: percentile(fromCreated, 0.5),
      fromCreatedP99Ms: percentile(fromCreated, 0.99),
    },
    rounds,
    runsPerMinute: {
      '1': median(rounds.filter((r) => r.workers === 1).map((r) => r.runsPerMinute)),
      '2': median(rounds.filter((r) => r.workers === 2).map((r) => r.runsPerMinute)),
    },
  };
}
