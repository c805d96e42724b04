import { runCancelChannel, runJobOptions } from './runs.queue';

describe('the runs queue contract', () => {
  test('ended jobs are removed by age and by count: a burst of failed or cancelled runs cannot grow Redis without bound', () => {
    const options = runJobOptions('5d7f4b1c-8e2a-4c6e-8a0c-2e4f7c9e1a3b', 100);
    expect(options.removeOnComplete).toEqual({ age: 24 * 3600, count: 10_000 });
    expect(options.removeOnFail).toEqual({ age: 7 * 24 * 3600, count: 10_000 });
  });

  test('the cancel channel is named by the deployment prefix and the queue, so platforms on one Redis never hear each other', () => {
    expect(runCancelChannel('platform-a', 'pipeline-runs')).toBe('platform-a:pipeline-runs:cancelled');
    expect(runCancelChannel('platform-b', 'pipeline-runs')).not.toBe(runCancelChannel('platform-a', 'pipeline-runs'));
  });
});
