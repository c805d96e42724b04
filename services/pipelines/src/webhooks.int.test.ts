import { serviceClient, testIdentity, waitFor, withReceiver, type WithReceiver } from '@platform/testing';
import { verifyWebhook } from '@platform/webhooks';
import { closeTestPool, createPipeline, ended, getRun, waitForRun } from './test/fixtures';
import { startTestApp, testQueue, type TestApp } from './test/app';
import { killAllWorkers, spawnWorker, type WorkerProcess } from './test/worker';

let app: WithReceiver<TestApp>;
let worker: WorkerProcess;

beforeAll(async () => {
  const queue = testQueue('runs-webhooks');
  worker = spawnWorker(queue);
  app = await withReceiver(startTestApp({ queue, webhooks: true }));
  await worker.ready;
});
afterAll(async () => {
  await worker.kill('SIGKILL');
  await app.close();
  await killAllWorkers();
  await closeTestPool();
});

test('a run sends run.queued, run.started and run.succeeded; a cancelled run sends run.cancelled', async () => {
  const c = serviceClient('pipelines', app.server, testIdentity());
  const endpoint = await c
    .post('/webhook-endpoints', { url: app.receiver.url('/runs-hook'), events: ['run.queued', 'run.started', 'run.succeeded', 'run.cancelled', 'run.failed'] })
    .expect(201);
  const pipeline = await createPipeline(c, {}, 20);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  const finished = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');
  expect(finished.status).toBe('succeeded');

  const long = await createPipeline(c, {}, 100_000);
  const longRun = await c.post(`/pipelines/${long.id}/runs`, { trigger: 'backfill' }).expect(202);
  await c.post(`/pipelines/${long.id}/runs/${longRun.body.id}/cancel`).expect(200);
  const cancelled = await waitForRun(c, long.id, longRun.body.id, ended, 'the cancelled run to end');
  expect(cancelled.status).toBe('cancelled');

  const verified = () => app.receiver.at('/runs-hook').map((d) => verifyWebhook(d.body, d.headers, endpoint.body.secret));
  const typesOf = (id: string) =>
    verified()
      .filter((e) => (e.data as { id: string }).id === id)
      .map((e) => e.type);
  await waitFor('the run events', () => typesOf(trigger.body.id).length >= 3 && typesOf(longRun.body.id).includes('run.cancelled'));
  const events = verified();
  const ofRun = (id: string) => events.filter((e) => (e.data as { id: string }).id === id).map((e) => e.type);
  expect(ofRun(trigger.body.id).sort()).toEqual(['run.queued', 'run.started', 'run.succeeded']);
  expect(ofRun(longRun.body.id)).toEqual(expect.arrayContaining(['run.queued', 'run.cancelled']));
  expect(events.find((e) => e.type === 'run.cancelled')!.data).toEqual(cancelled);
  expect(events.find((e) => e.type === 'run.succeeded')!.data).toEqual(await getRun(c, pipeline.id, trigger.body.id));
  expect(events.find((e) => e.type === 'run.queued')!.data).toMatchObject({ id: trigger.body.id, status: 'queued' });
});
