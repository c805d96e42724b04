import request from 'supertest';
import { ROUTES } from '@platform/core';
import { badInputRequests, routesCovered, runBadInput, serviceClient, testIdentity, type BadInputRequest, type ServiceClient } from '@platform/testing';
import { createPipeline } from './test/fixtures';
import { dropQueue, startTestApp, type TestApp } from './test/app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
  await dropQueue(app.queueName);
});

function send(c: ServiceClient, r: BadInputRequest) {
  const method = r.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
  return method === 'get' || method === 'delete' ? c[method](r.path) : c[method](r.path, r.body);
}

test('every route of the contract table, attacked with bad strings, dates, escapes and cursors: no 5xx, every refusal a contract 400', async () => {
  const c = serviceClient('pipelines', app.server, testIdentity());
  const pipeline = await createPipeline(c);
  const run = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  const endpoint = await c.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] }).expect(201);
  const ids: Record<string, string> = { id: pipeline.id, run_id: run.body.id };
  const document = (await request(app.server).get('/openapi.json').expect(200)).body;
  const requests = badInputRequests('pipelines', document, {
    params: (route, name) => (route.includes('/webhook-endpoints/') ? endpoint.body.id : ids[name]),
  });
  expect(routesCovered(requests)).toEqual(Object.keys(ROUTES.pipelines).sort());
  expect(await runBadInput(requests, (r) => send(c, r))).toEqual([]);
  // The pipeline and run under attack took no bad value.
  const stored = JSON.stringify([(await c.get(`/pipelines/${pipeline.id}`)).body, (await c.get(`/pipelines/${pipeline.id}/runs/${run.body.id}`)).body]);
  expect(stored).not.toMatch(/\\u0000|\\ud[89a-f]|\ufffd/i);
}, 120_000);
