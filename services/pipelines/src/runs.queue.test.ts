import { RunJob, runCancelChannel, runJobOptions } from './runs.queue';

describe('the runs queue contract', () => {
  test('ended jobs are removed by age and by count: a burst of failed or cancelled runs cannot grow Redis without bound', () => {
    const options = runJobOptions('5d7f4b1c-8e2a-4c6e-8a0c-2e4f7c9e1a3b', 100, 1);
    expect(options.removeOnComplete).toEqual({ age: 24 * 3600, count: 10_000 });
    expect(options.removeOnFail).toEqual({ age: 7 * 24 * 3600, count: 10_000 });
  });

  test('every run job has a priority >= 1: BullMQ would serve a job without one before every prioritized job, ahead of every workspace', () => {
    expect(runJobOptions('5d7f4b1c-8e2a-4c6e-8a0c-2e4f7c9e1a3b', 100, 3).priority).toBe(3);
    expect(() => runJobOptions('5d7f4b1c-8e2a-4c6e-8a0c-2e4f7c9e1a3b', 100, 0)).toThrow(RangeError);
    expect(() => runJobOptions('5d7f4b1c-8e2a-4c6e-8a0c-2e4f7c9e1a3b', 100, 1.5)).toThrow(RangeError);
  });

  test('the cancel channel is named by the deployment prefix and the queue, so platforms on one Redis never hear each other', () => {
    expect(runCancelChannel('platform-a', 'pipeline-runs')).toBe('platform-a:pipeline-runs:cancelled');
    expect(runCancelChannel('platform-b', 'pipeline-runs')).not.toBe(runCancelChannel('platform-a', 'pipeline-runs'));
  });

  test('a job from a producer one version ahead runs here: a field this version does not know is dropped; a missing or malformed one still fails', () => {
    const job = {
      run_id: '5d7f4b1c-8e2a-4c6e-8a0c-2e4f7c9e1a3b',
      workspace_id: '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a',
      pipeline_id: '7d9f1b3d-5f7a-4e3a-9b5c-2e4c6a8b0d1f',
    };
    expect(RunJob.parse({ ...job, added_later: { any: 'thing' } })).toEqual(job);
    expect(RunJob.safeParse({ ...job, pipeline_id: undefined }).success).toBe(false);
    expect(RunJob.safeParse({ ...job, traceparent: 'not a traceparent' }).success).toBe(false);
  });
});
