import { Agent } from 'node:http';
import { dirname } from 'node:path';
import { exitReport, halfSentPost, killSpawned, spawnService, waitFor, type ReadyProcess } from '@platform/testing';
import { DEAD_URL } from './test/gateway';
import { spawnGateway, type GatewayProcess } from './test/processes';

// Contract section 12, in front of a service: on SIGTERM the gateway stops accepting, proxies every
// request in flight to its end, closes its pools and exits 0; then the service does the same.
// Both are the real builds (gateway dist/main.js, events dist/main.js); the requests are provably
// in flight (half their body sent) when SIGTERM arrives, on keep-alive connections as a load
// balancer's.

const keepAlive = new Agent({ keepAlive: true, maxSockets: 100 });
let events: ReadyProcess;
let gateway: GatewayProcess;

beforeAll(async () => {
  // A database of its own: the events process's outbox relay must not take other tests' rows.
  events = await spawnService('events', dirname(require.resolve('@platform/events/package.json')), { database: 'events_gateway_drain' });
  gateway = await spawnGateway({ events: events.url, warehouse: DEAD_URL, pipelines: DEAD_URL });
}, 120_000);
afterAll(async () => {
  keepAlive.destroy();
  await killSpawned();
});

test('SIGTERM to the gateway: every proxied request in flight is answered (no 5xx), then it exits 0; so does the service', async () => {
  const workspace = await gateway.admin('POST', '/workspaces', { name: 'drain' });
  const key = await gateway.admin('POST', `/workspaces/${workspace.body.id}/api-keys`, { name: 'drain' });
  const auth = { authorization: `Bearer ${key.body.token as string}` };
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${gateway.url}${path}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { id: string } };
  };
  const event = await call('POST', '/events/v0/events', { name: 'Drain night', starts_at: '2030-06-01T18:00:00Z' });
  expect(event.status).toBe(201);
  const tickets: string[] = [];
  for (let i = 0; i < 20; i++) tickets.push((await call('POST', `/events/v0/events/${event.body.id}/tickets`)).body.id);

  // main serves the gateway's metrics on METRICS_PORT; the public port has no /metrics.
  const metrics = await (await fetch(gateway.metricsUrl)).text();
  expect(metrics).toContain('http_requests_total{method="POST",route="/events/v0/events/:id/tickets",status="201"} 20');
  expect(metrics).toContain('gateway_rate_limit_fallback 0');
  expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);

  // 40 validations through the gateway at once, each ticket twice (one 200, one 409), half sent.
  const inFlight = [...tickets, ...tickets].map((id) =>
    halfSentPost(`${gateway.url}/events/v0/tickets/${id}/validate`, auth, JSON.stringify({ gate: 'north-gate' }), keepAlive),
  );
  // Every half request has been read by the gateway: all 40 are in flight by its own count.
  await Promise.all(inFlight.map((r) => r.sent));
  await waitFor('the gateway to have read the 40 requests', async () => /^http_requests_in_flight 40$/m.test(await (await fetch(gateway.metricsUrl)).text()));

  gateway.proc.child.kill('SIGTERM');
  await waitFor('the process to stop accepting', () =>
    fetch(`${gateway.url}/healthz`).then(
      () => false,
      () => true,
    ),
  );
  expect(gateway.proc.running()).toBe(true);
  await expect(fetch(`${gateway.url}/healthz`)).rejects.toThrow();

  for (const r of inFlight) r.finish();
  const answers = await Promise.all(inFlight.map((r) => r.answer));
  expect(answers.filter((a) => a.status >= 500)).toEqual([]);
  expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
  expect(answers.filter((a) => a.status === 409)).toHaveLength(20);

  expect(await exitReport(gateway.proc)).toEqual({ code: 0, signal: null, output: '' });
  const lines = gateway.proc
    .output()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; route?: string; ok?: boolean });
  expect(lines.filter((l) => l.msg === 'request' && l.route === 'events POST /tickets/:id/validate')).toHaveLength(40);
  expect(lines.find((l) => l.msg === 'shutdown complete')).toMatchObject({ ok: true });

  // The service behind it: nothing in flight now, its pools close, exit 0.
  await events.proc.kill('SIGTERM');
  expect(await exitReport(events.proc)).toEqual({ code: 0, signal: null, output: '' });
}, 120_000);
