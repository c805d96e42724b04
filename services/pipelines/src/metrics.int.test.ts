import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricSample, scrapeMetrics, serviceClient, testIdentity, waitFor, withMetrics } from '@platform/testing';
import { createPipeline, ended, waitForRun } from './test/fixtures';
import { startTestApp, testQueue } from './test/app';
import { appAndWorkerPerTest, spawnWorker } from './test/worker';

// Contract section 12: GET /metrics on METRICS_PORT, apart from the API's port, for the API and the run worker.
const rig = appAndWorkerPerTest('SIGTERM');

test('the API counts requests by route pattern on its metrics port; its API port has no /metrics', async () => {
  // No webhooks here: a second outbox relay on the test database would take other files' rows
  // (main.int.test.ts checks the delivery queue's depth on the real process).
  const metered = await withMetrics((registry) => startTestApp({ metrics: registry }));
  rig.app = metered;

  const c = serviceClient('pipelines', rig.app.server, testIdentity());
  const pipeline = await createPipeline(c);
  await c.get(`/pipelines/${pipeline.id}`).expect(200);
  await c.get(`/pipelines/${pipeline.id}`).expect(200);

  const text = await metered.metrics.scrape();
  expect(metricSample(text, 'http_requests_total{method="GET",route="/pipelines/:id",status="200"}')).toBe(2);
  expect(metricSample(text, 'http_requests_total{method="POST",route="/pipelines",status="201"}')).toBe(1);
  expect(metricSample(text, 'http_request_duration_seconds_count{method="GET",route="/pipelines/:id",status_class="2xx"}')).toBe(2);
  expect(text).not.toContain(pipeline.id);
  expect(text).toMatch(/^process_resident_memory_bytes \d+/m);

  // The API port answers /metrics like any unknown route (signed: 404; unsigned: 401), never with metrics.
  const own = await c.get('/metrics').expect(404);
  expect(own.text).not.toContain('http_requests_total');
});

test('the worker serves run outcomes and the run queue depth on its own metrics port', async () => {
  const queue = testQueue('runs-metrics');
  const queueName = queue.name;
  rig.worker = spawnWorker(queue, { WORKER_STEP_DELAY_MS: '150' });
  rig.app = await startTestApp({ queue });
  await rig.worker.ready;
  const port = /"port":(\d+),[^\n]*"msg":"metrics listening"/.exec(rig.worker.output())?.[1];
  expect(port).toBeDefined();
  const base = `http://127.0.0.1:${port}`;
  const scrape = () => scrapeMetrics(`${base}/metrics`);
  const c = serviceClient('pipelines', rig.app.server, testIdentity());

  let text = await scrape();
  for (const outcome of ['succeeded', 'failed', 'cancelled']) expect(metricSample(text, `pipeline_runs_total{outcome="${outcome}"}`)).toBe(0);
  // The run retention sweeper's count (contract section 20), shown before anything was pruned.
  for (const table of ['runs', 'run_logs']) expect(metricSample(text, `pipeline_records_pruned_total{table="${table}"}`)).toBe(0);
  expect(metricSample(text, `queue_depth{queue="${queueName}",state="waiting"}`)).toBe(0);
  // Fair run scheduling (contract section 20): runs this worker admitted, and the runs of all workspaces waiting for a slot (no job yet).
  expect(metricSample(text, 'pipeline_runs_admitted_total')).toBe(0);
  expect(metricSample(text, 'pipeline_runs_awaiting_admission')).toBeGreaterThanOrEqual(0);
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);

  // succeeded
  const pipeline = await createPipeline(c, {}, 20);
  const first = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  expect((await waitForRun(c, pipeline.id, first.body.id, ended, 'the run')).status).toBe('succeeded');
  await waitFor('the succeeded count', async () => metricSample(await scrape(), 'pipeline_runs_total{outcome="succeeded"}') === 1);

  // cancelled while running
  const long = await createPipeline(c, {}, 500);
  const second = await c.post(`/pipelines/${long.id}/runs`, { trigger: 'manual' }).expect(202);
  await waitForRun(c, long.id, second.body.id, (r) => r.status === 'running', 'the run to start');
  await c.post(`/pipelines/${long.id}/runs/${second.body.id}/cancel`).expect(200);
  await waitFor('the cancelled count', async () => metricSample(await scrape(), 'pipeline_runs_total{outcome="cancelled"}') === 1);

  // failed: a source whose records have no id fails the run at once
  const source = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[{"name":"no id"}]'));
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  try {
    const broken = await createPipeline(c, {
      source: { connector: 'http-json', config: { url: `http://127.0.0.1:${(source.address() as AddressInfo).port}/` } },
    });
    const third = await c.post(`/pipelines/${broken.id}/runs`, { trigger: 'manual' }).expect(202);
    expect((await waitForRun(c, broken.id, third.body.id, ended, 'the run to fail')).status).toBe('failed');
    await waitFor('the failed count', async () => metricSample(await scrape(), 'pipeline_runs_total{outcome="failed"}') === 1);
  } finally {
    source.close();
  }
  text = await scrape();
  expect(metricSample(text, 'pipeline_runs_total{outcome="succeeded"}')).toBe(1);
  // Two failed jobs: the failed run's, and the cancelled run's (a cancelled run's job fails, "run cancelled").
  expect(metricSample(text, `queue_depth{queue="${queueName}",state="failed"}`)).toBe(2);

  // /healthz and /readyz stay on the worker's own port; its metrics port serves only /metrics.
  expect((await fetch(`${base}/healthz`)).status).toBe(404);
});
