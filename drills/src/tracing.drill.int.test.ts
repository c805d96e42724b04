import { randomBytes } from 'node:crypto';
import {
  startOtlpReceiver,
  startPlatform,
  startReceiver,
  uniqueDatabaseName,
  waitFor,
  type OtlpReceiver,
  type Platform,
  type ReceivedSpan,
  type Receiver,
} from '@platform/testing';
import { call, direct } from './support/load';

// Traces across the platform (issue 18): the built processes export to an OTLP receiver on
// 127.0.0.1; a client's W3C traceparent is followed through the gateway, a service, its database,
// the run queue, the worker and a webhook delivery.

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

let otlp: OtlpReceiver;
let hooks: Receiver;
let platform: Platform;
/** Every line each process wrote, by process name. */
const output = new Map<string, string[]>();

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  hooks = await startReceiver();
  platform = await startPlatform({
    name: uniqueDatabaseName('drill_tracing'),
    processes: [{ kind: 'events', env: { WEBHOOKS_ALLOW_PRIVATE: 'true' } }, 'pipelines', 'worker', 'gateway'],
    // Request lines are written at info.
    logLevel: 'info',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' },
    onOutput: (name, line) => {
      if (!output.has(name)) output.set(name, []);
      output.get(name)!.push(line);
    },
  });
}, 90_000);

afterAll(async () => {
  await platform?.stop();
  await hooks?.close();
  await otlp?.close();
});

/** A client's trace context: a trace id and a span id of its own, sampled. */
function clientTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

function throughGateway(path: string, body: unknown, traceparent: string) {
  return call(`${platform.gatewayUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${platform.token}`, traceparent }, body });
}

/** True when `ancestor` is `span`'s parent, grandparent, ... within the spans of its trace. */
function descendsFrom(span: ReceivedSpan, ancestor: ReceivedSpan, spans: ReceivedSpan[]): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) if (at.spanId === ancestor.spanId) return true;
  return false;
}

const find = (spans: ReceivedSpan[], what: string, test: (span: ReceivedSpan) => boolean): ReceivedSpan => {
  const found = spans.find(test);
  if (!found) throw new Error(`no ${what} among ${JSON.stringify(spans.map((s) => `${s.service} ${s.name} (${s.kind})`))}`);
  return found;
};

const isDatabaseSpan = (span: ReceivedSpan) => span.attributes['db.system'] === 'postgresql' || span.attributes['db.system.name'] === 'postgresql';

const logLines = (name: string) =>
  (output.get(name) ?? []).flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

test('one ticket validation through the gateway is one trace: the client span, then the gateway, the events service and its database; its webhook delivery links to it; its log lines carry the trace id', async () => {
  const events = direct(platform, 'events');
  const endpoint = await throughGateway(
    '/events/v0/webhook-endpoints',
    { url: hooks.url('/traced'), events: ['ticket.validated'] },
    clientTraceparent().traceparent,
  );
  expect(endpoint.status).toBe(201);
  const event = await events.post('/events', { name: 'Traced', starts_at: new Date().toISOString() });
  const ticket = await events.post(`/events/${event.body.id}/tickets`, { holder_name: 'guest' });

  const client = clientTraceparent();
  const validated = await throughGateway(`/events/v0/tickets/${ticket.body.id}/validate`, { gate: 'north' }, client.traceparent);
  expect(validated.status).toBe(200);

  let spans: ReceivedSpan[] = [];
  await waitFor(
    'the validation span of the events service and a delivery linked to the trace',
    () => {
      spans = otlp.trace(client.traceId);
      const delivery = otlp.spans().some((s) => s.name === 'webhook delivery' && s.links.some((l) => l.traceId === client.traceId));
      return delivery && spans.some((s) => s.service === 'platform-events' && s.kind === SERVER) && spans.some(isDatabaseSpan);
    },
    15_000,
    100,
  );

  const gatewayServer = find(spans, 'gateway server span', (s) => s.service === 'platform-gateway' && s.kind === SERVER);
  expect(gatewayServer.name).toBe('POST /events/v0/tickets/:id/validate');
  expect(gatewayServer.parentSpanId).toBe(client.spanId);
  expect(gatewayServer.attributes['http.response.status_code']).toBe(200);
  const gatewayClient = find(
    spans,
    'gateway client span',
    (s) => s.service === 'platform-gateway' && s.kind === CLIENT && s.attributes['platform.service'] === 'events',
  );
  expect(gatewayClient.parentSpanId).toBe(gatewayServer.spanId);
  // The rate limiter's one Redis call is in the request's span too.
  expect(spans.some((s) => s.service === 'platform-gateway' && s.attributes['db.system.name'] === 'redis' && s.parentSpanId === gatewayServer.spanId)).toBe(
    true,
  );
  const eventsServer = find(spans, 'events server span', (s) => s.service === 'platform-events' && s.kind === SERVER);
  expect(eventsServer.parentSpanId).toBe(gatewayClient.spanId);
  expect(eventsServer.name).toBe('POST /tickets/:id/validate');
  const database = find(spans, 'database span of the events service', (s) => s.service === 'platform-events' && isDatabaseSpan(s));
  expect(descendsFrom(database, eventsServer, spans)).toBe(true);

  // The delivery is a trace of its own (retried for hours), linked to the validation's.
  const delivery = find(otlp.spans(), 'linked delivery span', (s) => s.name === 'webhook delivery' && s.links.some((l) => l.traceId === client.traceId));
  expect(delivery.traceId).not.toBe(client.traceId);
  expect(delivery.kind).toBe(CONSUMER);
  expect(hooks.at('/traced')).toHaveLength(1);

  // The request's log lines, in the gateway and in the service, carry the trace id.
  await waitFor('the request log lines', () => logLines('events').some((l) => l.trace_id === client.traceId), 60_000, 50);
  expect(logLines('gateway').find((l) => l.msg === 'request' && l.trace_id === client.traceId)).toMatchObject({ status: 200, span_id: gatewayServer.spanId });
}, 60_000);

test('one run is one trace from the trigger through the gateway and the pipelines service to the end of its worker span', async () => {
  const pipeline = await direct(platform, 'pipelines').post('/pipelines', {
    name: 'traced',
    source: { connector: 'sample', config: { records: 20, seed: 1 } },
    destination: { connector: 'postgres', config: { table: 'traced_records' } },
  });
  expect(pipeline.status).toBe(201);

  const client = clientTraceparent();
  const triggered = await throughGateway(`/pipelines/v3/pipelines/${pipeline.body.id}/runs`, { trigger: 'manual' }, client.traceparent);
  expect(triggered.status).toBe(202);

  let spans: ReceivedSpan[] = [];
  await waitFor(
    "the worker's run span",
    () => (spans = otlp.trace(client.traceId)).some((s) => s.service === 'platform-pipelines-worker' && s.name === 'pipeline run'),
    20_000,
    100,
  );
  const run = await direct(platform, 'pipelines').get(`/pipelines/${pipeline.body.id}/runs/${triggered.body.id}`);
  expect(run.body.status).toBe('succeeded');

  const gatewayServer = find(spans, 'gateway server span', (s) => s.service === 'platform-gateway' && s.kind === SERVER);
  expect(gatewayServer.parentSpanId).toBe(client.spanId);
  const pipelinesServer = find(spans, 'pipelines server span', (s) => s.service === 'platform-pipelines' && s.kind === SERVER);
  expect(descendsFrom(pipelinesServer, gatewayServer, spans)).toBe(true);
  const worker = find(spans, 'worker run span', (s) => s.service === 'platform-pipelines-worker' && s.name === 'pipeline run');
  expect(worker.kind).toBe(CONSUMER);
  expect(worker.attributes['messaging.message.id']).toBe(triggered.body.id);
  expect(descendsFrom(worker, pipelinesServer, spans)).toBe(true);
  // The run's own database work is in the trace, under the run span.
  expect(spans.some((s) => s.service === 'platform-pipelines-worker' && isDatabaseSpan(s) && descendsFrom(s, worker, spans))).toBe(true);
}, 60_000);

test("a traceparent that is not a valid one is a client's input like any other: the request is served, and the gateway starts a trace of its own", async () => {
  const events = direct(platform, 'events');
  const event = await events.post('/events', { name: 'Hostile trace context', starts_at: new Date().toISOString() });
  const hostile = [
    'garbage',
    `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`, // the all-zero trace id the spec calls invalid
    `00-${'a'.repeat(32)}-${'0'.repeat(16)}-01`, // the all-zero parent id
    `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, // the version the spec forbids
    `00-${'A'.repeat(32)}-${'b'.repeat(16)}-01`, // upper-case hex
    `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01-${'x'.repeat(6_000)}`, // long, with trailing data
    '00-\u00e9\u00e9-01',
  ];
  const answered: { traceparent: string; requestId: string }[] = [];
  for (const traceparent of hostile) {
    const ticket = await events.post(`/events/${event.body.id}/tickets`, { holder_name: 'guest' });
    const outcome = await throughGateway(`/events/v0/tickets/${ticket.body.id}/validate`, { gate: 'north' }, traceparent);
    expect({ traceparent: traceparent.slice(0, 80), status: outcome.status }).toEqual({ traceparent: traceparent.slice(0, 80), status: 200 });
    answered.push({ traceparent, requestId: outcome.headers!.get('x-request-id')! });
  }
  for (const { traceparent, requestId } of answered) {
    const server = await waitFor(
      `the gateway span of the request with traceparent ${traceparent.slice(0, 80)}`,
      () => otlp.spans().find((s) => s.service === 'platform-gateway' && s.kind === SERVER && s.attributes['platform.request_id'] === requestId),
      10_000,
      50,
    );
    // A root span of a new trace, not a child of whatever the client sent.
    expect(server.parentSpanId).toBeUndefined();
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(server.traceId).not.toBe('0'.repeat(32));
    expect(traceparent).not.toContain(server.traceId);
  }
});

test('with tracing off (no endpoint) no process exports anything and no log line carries a trace id', async () => {
  // Set but empty is unset: the way to turn tracing off over an environment that has it.
  for (const name of ['events', 'pipelines', 'worker', 'gateway']) {
    await platform.restart(name, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: '' } });
    output.set(name, []);
  }
  const before = otlp.requests();

  const events = direct(platform, 'events');
  const event = await events.post('/events', { name: 'Untraced', starts_at: new Date().toISOString() });
  const ticket = await events.post(`/events/${event.body.id}/tickets`, { holder_name: 'guest' });
  const client = clientTraceparent();
  expect((await throughGateway(`/events/v0/tickets/${ticket.body.id}/validate`, { gate: 'north' }, client.traceparent)).status).toBe(200);
  // The event that proves spans would have been sent: a traced process exports what it still holds
  // when it shuts down (runProcess's tracing step), so once each has exited after SIGTERM, nothing more can come.
  for (const name of ['gateway', 'events', 'pipelines', 'worker']) expect((await platform.kill(name, 'SIGTERM')).code).toBe(0);
  expect(otlp.requests()).toBe(before);
  const lines = ['events', 'pipelines', 'worker', 'gateway'].flatMap(logLines);
  expect(lines.some((l) => l.msg === 'request' && l.status === 200)).toBe(true);
  expect(lines.filter((l) => 'trace_id' in l || 'span_id' in l)).toEqual([]);
}, 90_000);
