import { createLogger, type WorkspaceId } from '@platform/core';
import { PipelinesConfig } from './config';
import {
  admissionPriority,
  DEFAULT_WORKSPACE_MAX_ACTIVE_RUNS,
  freeSlots,
  MAX_WORKSPACE_MAX_ACTIVE_RUNS,
  runAdmission,
  type AdmittedRun,
} from './runs.admission';
import type { RunJobData } from './runs.queue';
import { WorkerConfig } from './worker.config';

const WORKSPACE = '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a' as WorkspaceId;
const logger = createLogger('admission-test', 'silent');

function admitted(count: number, held: number): AdmittedRun[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `00000000-0000-4000-8000-00000000000${index}`,
    workspaceId: WORKSPACE,
    pipelineId: `10000000-0000-4000-8000-00000000000${index}`,
    priority: admissionPriority(held, index),
  }));
}

describe('admission arithmetic', () => {
  test('a workspace is admitted up to its cap, never beyond, whatever it already holds', () => {
    expect(freeSlots(0, 3)).toBe(3);
    expect(freeSlots(2, 3)).toBe(1);
    expect(freeSlots(3, 3)).toBe(0);
    // More held than the cap (runs started by a producer of the version before): nothing, not a negative count.
    expect(freeSlots(5, 3)).toBe(0);
  });

  test("priorities count the workspace's runs admitted before: its first waiting run is 1, its second 2, so a free slot serves the workspace holding the fewest", () => {
    expect(admissionPriority(0, 0)).toBe(1);
    expect([0, 1, 2].map((index) => admissionPriority(0, index))).toEqual([1, 2, 3]);
    // A workspace with 7 runs active: its next run is 8th in line, behind every other workspace's first seven.
    expect(admissionPriority(7, 0)).toBe(8);
    // Never 0 (BullMQ serves priority 0 before all prioritized jobs); at most the cap, far below BullMQ's 2^21 - 1.
    expect(admissionPriority(MAX_WORKSPACE_MAX_ACTIVE_RUNS - 1, 0)).toBe(MAX_WORKSPACE_MAX_ACTIVE_RUNS);
    expect(MAX_WORKSPACE_MAX_ACTIVE_RUNS).toBeLessThan(2 ** 21 - 1);
  });

  test('PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: default 10 in the API and the worker alike, an integer 1..1000', () => {
    const base = { PLATFORM_INTERNAL_SECRET: 'x'.repeat(32) };
    expect(DEFAULT_WORKSPACE_MAX_ACTIVE_RUNS).toBe(10);
    expect(PipelinesConfig.parse(base).PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS).toBe(10);
    expect(WorkerConfig.parse({}).PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS).toBe(10);
    expect(WorkerConfig.parse({ PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: '3' }).PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS).toBe(3);
    for (const bad of ['0', '1001', '2.5', 'ten']) {
      expect(WorkerConfig.safeParse({ PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: bad }).success).toBe(false);
      expect(PipelinesConfig.safeParse({ ...base, PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: bad }).success).toBe(false);
    }
  });
});

describe('runAdmission', () => {
  function harness(runs: AdmittedRun[], failFrom = Infinity) {
    const added: { job: RunJobData; priority: number }[] = [];
    const caps: number[] = [];
    const admission = runAdmission({
      admit: async (_workspaceId, maxActiveRuns) => {
        caps.push(maxActiveRuns);
        return runs;
      },
      enqueue: async (job, priority) => {
        if (added.length >= failFrom) throw new Error('redis is away');
        added.push({ job, priority });
      },
      maxActiveRuns: 4,
      logger,
    });
    return { admission, added, caps };
  }

  test('adds every admitted run its job with its priority, in priority order, under the configured cap', async () => {
    const { admission, added, caps } = harness(admitted(3, 1));
    const result = await admission.admit(WORKSPACE);
    expect(caps).toEqual([4]);
    expect(result.notEnqueued).toEqual([]);
    expect(added.map((a) => [a.job.run_id, a.priority])).toEqual(admitted(3, 1).map((run) => [run.id, run.priority]));
    expect(added.map((a) => a.priority)).toEqual([2, 3, 4]);
  });

  test("only the caller's own run carries its trace: a run admitted along with it belongs to another trigger", async () => {
    const runs = admitted(2, 0);
    const { admission, added } = harness(runs);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await admission.admit(WORKSPACE, { runId: runs[1]!.id, traceparent });
    expect(added[0]!.job.traceparent).toBeUndefined();
    expect(added[1]!.job.traceparent).toBe(traceparent);
  });

  test('after the first add that fails the rest are not tried: all are reported not enqueued (they keep their slot; the requeue adds them)', async () => {
    const runs = admitted(3, 0);
    const { admission, added } = harness(runs, 1);
    const result = await admission.admit(WORKSPACE);
    expect(added).toHaveLength(1);
    expect(result.admitted).toEqual(runs);
    expect(result.notEnqueued).toEqual(runs.slice(1));
  });

  test('runEnded admits for the workspace and never throws (the requeue admits after a failure)', async () => {
    const { admission, added } = harness(admitted(1, 0));
    await admission.runEnded({ workspaceId: WORKSPACE, pipelineId: 'p' });
    expect(added).toHaveLength(1);
    const failing = runAdmission({
      admit: () => Promise.reject(new Error('database away')),
      enqueue: () => Promise.resolve(),
      maxActiveRuns: 4,
      logger,
    });
    await expect(failing.runEnded({ workspaceId: WORKSPACE, pipelineId: 'p' })).resolves.toBeUndefined();
  });

  test("a run's end promotes the pipeline's next pending run before the admission, and a failed promotion still admits (contract section 19)", async () => {
    const calls: string[] = [];
    const admission = runAdmission({
      admit: () => {
        calls.push('admit');
        return Promise.resolve([]);
      },
      promote: (pipeline) => {
        calls.push(`promote ${pipeline.pipelineId}`);
        return calls.length > 2 ? Promise.reject(new Error('database away')) : Promise.resolve(true);
      },
      enqueue: () => Promise.resolve(),
      maxActiveRuns: 4,
      logger,
    });
    await admission.runEnded({ workspaceId: WORKSPACE, pipelineId: 'p' });
    expect(calls).toEqual(['promote p', 'admit']);
    await expect(admission.startPending({ workspaceId: WORKSPACE, pipelineId: 'q' })).resolves.toBeUndefined();
    expect(calls).toEqual(['promote p', 'admit', 'promote q', 'admit']);
  });
});
