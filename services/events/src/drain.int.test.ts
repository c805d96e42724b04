import { Agent } from 'node:http';
import { join } from 'node:path';
import { exitReport, gatewayHeaders, halfSentPost, killSpawned, scrapeMetrics, spawnService, testIdentity, waitFor } from '@platform/testing';

// Contract section 12: on SIGTERM the process stops accepting, finishes the requests in flight,
// closes its pools and exits 0. Proven on the real build (node dist/main.js) with requests that are
// provably in flight: their bodies are only half sent when SIGTERM arrives.

// Keep-alive, as the gateway's pool and load balancers connect: open connections must not hold the shutdown.
const keepAlive = new Agent({ keepAlive: true, maxSockets: 100 });
afterAll(async () => {
  keepAlive.destroy();
  await killSpawned();
});

test('SIGTERM: every request in flight is answered (no 5xx), new connections are refused, the process exits 0', async () => {
  // A database of its own: the process's outbox relay must not take other test files' outbox rows.
  const { proc, url: base, metricsUrl } = await spawnService('events', join(__dirname, '..'), { database: 'events_drain', env: { LOG_LEVEL: 'info' } });

  const identity = testIdentity();
  const call = async (method: string, path: string, body?: object) => {
    const raw = body && JSON.stringify(body);
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...gatewayHeaders('events', identity, method, path, { body: raw }), 'content-type': 'application/json' },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as { id: string } };
  };
  const event = await call('POST', '/events', { name: 'Drain night', starts_at: '2030-06-01T18:00:00Z' });
  expect(event.status).toBe(201);
  const tickets: string[] = [];
  for (let i = 0; i < 20; i++) tickets.push((await call('POST', `/events/${event.body.id}/tickets`)).body.id);

  // main serves its metrics on METRICS_PORT, the API port does not.
  const metrics = await scrapeMetrics(metricsUrl);
  expect(metrics).toContain('http_requests_total{method="POST",route="/events/:id/tickets",status="201"} 20');
  expect(metrics).toMatch(/^queue_depth\{queue="webhooks-events",state="waiting"\} \d+$/m);
  expect(metrics).toContain('webhook_deliveries_total{outcome="succeeded"} 0');
  expect((await call('GET', '/metrics')).status).toBe(404);

  const GATE_BODY = JSON.stringify({ gate: 'north-gate' });
  // 40 validations at once, each ticket twice (one 200, one 409), all with half a body sent.
  const inFlight = [...tickets, ...tickets].map((id) =>
    halfSentPost(
      `${base}/tickets/${id}/validate`,
      gatewayHeaders('events', identity, 'POST', `/tickets/${id}/validate`, { body: GATE_BODY }),
      GATE_BODY,
      keepAlive,
    ),
  );
  // The service has read their headers and waits for the bodies: all 40 are in flight by its own count.
  await Promise.all(inFlight.map((r) => r.sent));
  await waitFor('the service to have read the 40 requests', async () => /^http_requests_in_flight 40$/m.test(await scrapeMetrics(metricsUrl)));

  proc.child.kill('SIGTERM');
  await waitFor('the process to stop accepting', () =>
    fetch(`${base}/healthz`).then(
      () => false,
      () => true,
    ),
  );
  // Draining: still running for the requests in flight, but no longer accepting.
  expect(proc.running()).toBe(true);
  await expect(fetch(`${base}/healthz`)).rejects.toThrow();

  for (const r of inFlight) r.finish();
  const answers = await Promise.all(inFlight.map((r) => r.answer));
  expect(answers.filter((a) => a.status >= 500)).toEqual([]);
  expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
  expect(answers.filter((a) => a.status === 409)).toHaveLength(20);

  expect(await exitReport(proc)).toEqual({ code: 0, signal: null, output: '' });
  const lines = proc
    .output()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; ok?: boolean });
  expect(lines.filter((l) => l.msg === 'request' && (l as { route?: string }).route === '/tickets/:id/validate')).toHaveLength(40);
  expect(lines.find((l) => l.msg === 'shutdown complete')).toMatchObject({ ok: true });
}, 120_000);
