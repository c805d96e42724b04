import type { Response } from 'supertest';
import { errorBody, quotaExceeded } from '@platform/core';
import { openApiValidator, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import type { EventsLimits } from './config';
import { eventsApiDocument } from './events.openapi';
import { startTestApp } from './test/app';

// What one workspace may keep in the events service (EVENTS_WORKSPACE_MAX_EVENTS and
// EVENTS_WORKSPACE_MAX_TICKETS): a create past a limit is core's quota 409 and writes nothing, under
// any number of concurrent creates; each workspace has a count of its own.

type TestApp = Awaited<ReturnType<typeof startTestApp>>;
const apps: TestApp[] = [];

async function appWith(limits: EventsLimits): Promise<TestApp> {
  const app = await startTestApp({ limits });
  apps.push(app);
  return app;
}

let small: TestApp;
let contended: TestApp;

beforeAll(async () => {
  small = await appWith({ events: 3, tickets: 3 });
  contended = await appWith({ events: 5, tickets: 5 });
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const client = (app: TestApp): ServiceClient => serviceClient('events', app.server, testIdentity());
const EVENT = { name: 'Open Air', starts_at: '2025-06-01T18:00:00Z' };

async function createEvent(c: ServiceClient): Promise<string> {
  return (await c.post('/events', EVENT).expect(201)).body.id as string;
}

const validator = openApiValidator(eventsApiDocument() as never);
const CREATE_ROUTE = { events: '/events', tickets: '/events/{id}/tickets' } as const;

/** Exactly what core's quotaExceeded(name, limit) answers, with this response's request id; the create route documents it. */
function expectRefused(res: Response, name: 'events' | 'tickets', limit: number): void {
  expect(res.status).toBe(409);
  expect(res.body).toEqual(errorBody(quotaExceeded(name, limit), res.headers['x-request-id'] as string));
  expect(res.body.error).toMatchObject({ code: 'conflict', quota: name, limit, errors: [{ in: 'body', field: '', code: 'quota_exceeded' }] });
  expect(validator.responseProblems('POST', CREATE_ROUTE[name], res.status, res.body)).toEqual([]);
}

/** Exactly `created` of concurrent creates are 201, every other the refusal at `limit`. */
function expectExactlyCreated(answers: Response[], created: number, name: 'events' | 'tickets', limit: number): void {
  expect(answers.map((res) => res.status).sort()).toEqual([...Array<number>(created).fill(201), ...Array<number>(answers.length - created).fill(409)]);
  for (const res of answers.filter((r) => r.status === 409)) expectRefused(res, name, limit);
}

/** What the database holds of the workspace: its rows, and its counter row (null before its first create). */
async function kept(app: TestApp, workspaceId: string) {
  const [events, tickets, ticketsTotal, usage] = await Promise.all([
    app.db.event.count({ where: { workspaceId } }),
    app.db.ticket.count({ where: { workspaceId } }),
    app.db.event.aggregate({ where: { workspaceId }, _sum: { ticketsTotal: true } }),
    app.db.workspaceUsage.findUnique({ where: { workspaceId } }),
  ]);
  return { events, tickets, ticketsTotal: ticketsTotal._sum.ticketsTotal ?? 0, usage: usage && { events: usage.events, tickets: usage.tickets } };
}

describe('the events limit', () => {
  test('creates up to the limit are 201; the next is 409 quota_exceeded (quota "events") and writes nothing', async () => {
    const c = client(small);
    for (let i = 0; i < 3; i++) await createEvent(c);
    expectRefused(await c.post('/events', EVENT), 'events', 3);
    expectRefused(await c.post('/events', { ...EVENT, name: 'Again' }), 'events', 3);

    expect((await c.get('/events?limit=100').expect(200)).body.data).toHaveLength(3);
    expect(await kept(small, c.identity.workspaceId)).toEqual({ events: 3, tickets: 0, ticketsTotal: 0, usage: { events: 3, tickets: 0 } });
  });

  test('a refused body that is invalid too is 400: the limit is checked only for a create that would be made', async () => {
    const c = client(small);
    for (let i = 0; i < 3; i++) await createEvent(c);
    await c.post('/events', { ...EVENT, ends_at: '2025-06-01T17:00:00Z' }).expect(400);
  });

  test('under 20 concurrent creates with a limit of 5, exactly 5 events are created', async () => {
    const c = client(contended);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => c.post('/events', { ...EVENT, name: `Concurrent ${i}` })));
    expectExactlyCreated(answers, 5, 'events', 5);
    expect(await kept(contended, c.identity.workspaceId)).toEqual({ events: 5, tickets: 0, ticketsTotal: 0, usage: { events: 5, tickets: 0 } });
  });
});

describe('the tickets limit (over all the events of the workspace)', () => {
  test('tickets up to the limit over two events are 201; the next, of either event, is 409 quota_exceeded (quota "tickets") and issues nothing', async () => {
    const c = client(small);
    const [first, second] = [await createEvent(c), await createEvent(c)];
    await c.post(`/events/${first}/tickets`, { holder_name: 'Ada' }).expect(201);
    await c.post(`/events/${first}/tickets`, {}).expect(201);
    await c.post(`/events/${second}/tickets`, { metadata: { seat: 'A-1' } }).expect(201);
    expectRefused(await c.post(`/events/${second}/tickets`, { holder_name: 'Grace' }), 'tickets', 3);
    expectRefused(await c.post(`/events/${first}/tickets`, {}), 'tickets', 3);

    expect((await c.get(`/events/${first}/tickets`).expect(200)).body.data).toHaveLength(2);
    expect((await c.get(`/events/${second}/tickets`).expect(200)).body.data).toHaveLength(1);
    expect((await c.get(`/events/${second}/stats`).expect(200)).body.tickets.total).toBe(1);
    expect(await kept(small, c.identity.workspaceId)).toEqual({ events: 2, tickets: 3, ticketsTotal: 3, usage: { events: 2, tickets: 3 } });
  });

  test("an unknown event is still 404 at the limit, and another workspace's event too", async () => {
    const c = client(small);
    const event = await createEvent(c);
    for (let i = 0; i < 3; i++) await c.post(`/events/${event}/tickets`, {}).expect(201);
    await client(small).post(`/events/${event}/tickets`, {}).expect(404);
    expect(await kept(small, c.identity.workspaceId)).toMatchObject({ tickets: 3 });
  });

  test('under 20 concurrent issues over two events with a limit of 5, exactly 5 tickets are issued', async () => {
    const c = client(contended);
    const events = [await createEvent(c), await createEvent(c)];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => c.post(`/events/${events[i % 2]!}/tickets`, { holder_name: `Holder ${i}` })));
    expectExactlyCreated(answers, 5, 'tickets', 5);
    expect(await kept(contended, c.identity.workspaceId)).toEqual({ events: 2, tickets: 5, ticketsTotal: 5, usage: { events: 2, tickets: 5 } });
  });
});

describe('each workspace has a count of its own', () => {
  test("a workspace at both limits leaves another's creates untouched, concurrent or not", async () => {
    const full = client(contended);
    const event = await createEvent(full);
    for (let i = 0; i < 4; i++) await createEvent(full);
    for (let i = 0; i < 5; i++) await full.post(`/events/${event}/tickets`, {}).expect(201);
    expectRefused(await full.post('/events', EVENT), 'events', 5);

    const other = client(contended);
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => other.post('/events', EVENT)),
      ...Array.from({ length: 5 }, () => full.post('/events', EVENT)),
    ]);
    expect(answers.map((res) => res.status)).toEqual([...Array<number>(5).fill(201), ...Array<number>(5).fill(409)]);
    const otherEvent = answers[0]!.body.id as string;
    for (let i = 0; i < 5; i++) await other.post(`/events/${otherEvent}/tickets`, {}).expect(201);
    expectRefused(await other.post(`/events/${otherEvent}/tickets`, {}), 'tickets', 5);

    expect(await kept(contended, full.identity.workspaceId)).toEqual({ events: 5, tickets: 5, ticketsTotal: 5, usage: { events: 5, tickets: 5 } });
    expect(await kept(contended, other.identity.workspaceId)).toEqual({ events: 5, tickets: 5, ticketsTotal: 5, usage: { events: 5, tickets: 5 } });
  });
});

describe('a limit of 0', () => {
  test("refuses a workspace's very first create, and leaves no counter row behind", async () => {
    const closed = await appWith({ events: 0, tickets: 0 });
    const c = client(closed);
    expectRefused(await c.post('/events', EVENT), 'events', 0);
    expect(await kept(closed, c.identity.workspaceId)).toEqual({ events: 0, tickets: 0, ticketsTotal: 0, usage: null });

    // Events allowed, tickets not: the workspace's row exists (its event), and its tickets count is refused.
    const ticketless = await appWith({ events: 1, tickets: 0 });
    const t = client(ticketless);
    const event = await createEvent(t);
    expectRefused(await t.post(`/events/${event}/tickets`, {}), 'tickets', 0);
    expect(await kept(ticketless, t.identity.workspaceId)).toEqual({ events: 1, tickets: 0, ticketsTotal: 0, usage: { events: 1, tickets: 0 } });
  });
});
