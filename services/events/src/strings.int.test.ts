import { expectErrorBody, serviceClient, testIdentity } from '@platform/testing';
import { startTestApp } from './test/app';

let app: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

const client = () => serviceClient('events', app.server, testIdentity());
const entries = (value: object) => Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));

async function newEvent(c: ReturnType<typeof client>): Promise<string> {
  return (await c.post('/events', { name: 'Open Air', starts_at: '2025-06-01T18:00:00Z' }).expect(201)).body.id;
}

describe('ticket metadata is stored as sent or refused, never changed', () => {
  test('__proto__ and constructor keys are stored and read back (issue, get, list, validation event)', async () => {
    const c = client();
    const eventId = await newEvent(c);
    const issued = await c.post(`/events/${eventId}/tickets`, '{"metadata":{"__proto__":"x","constructor":"y"}}').expect(201);
    expect(JSON.stringify(issued.body.metadata)).toBe('{"__proto__":"x","constructor":"y"}');
    expect(entries((await c.get(`/tickets/${issued.body.id}`).expect(200)).body.metadata)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    expect(entries((await c.get(`/events/${eventId}/tickets`).expect(200)).body.data[0].metadata)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    await c.post(`/tickets/${issued.body.id}/validate`, {}).expect(200);
    const [event] = await app.db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId } });
    expect(entries((event!.data as { metadata: object }).metadata)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
  });

  test.each([
    ['a lone surrogate value', '{"metadata":{"k":"\\ud800"}}', 'metadata.k', 'invalid_format'],
    ['a NUL value', '{"metadata":{"k":"a\\u0000"}}', 'metadata.k', 'invalid_format'],
    ['a lone surrogate key', '{"metadata":{"\\udc00":"v"}}', 'metadata.\\udc00', 'invalid_format'],
    ['a NUL holder name', '{"holder_name":"\\u0000"}', 'holder_name', 'invalid_format'],
    ['an empty key (rules as for item metadata)', '{"metadata":{"":"v"}}', 'metadata.', 'too_short'],
    ['a key of 501 characters', `{"metadata":{"${'k'.repeat(501)}":"v"}}`, `metadata.${'k'.repeat(501)}`, 'too_long'],
  ])('%s is 400 and nothing is stored', async (_name, raw, field, code) => {
    const c = client();
    const eventId = await newEvent(c);
    const res = await c.post(`/events/${eventId}/tickets`, raw).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'body', field, code, message: expect.any(String) }]);
    expect((await c.get(`/events/${eventId}/tickets`)).body.data).toEqual([]);
  });
});

describe('timestamps lie in the UTC years 0001-9999', () => {
  test.each(['0000-12-31T23:59:59Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:00:00-02:00'])('starts_at %s is 400, never 500', async (startsAt) => {
    const res = await client().post('/events', { name: 'x', starts_at: startsAt, ends_at: startsAt }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors!.map((e) => [e.field, e.code])).toEqual([
      ['starts_at', 'out_of_range'],
      ['ends_at', 'out_of_range'],
    ]);
  });

  test('the first and last storable instants are stored and read back', async () => {
    const c = client();
    const res = await c.post('/events', { name: 'x', starts_at: '0001-01-01T01:00:00+01:00', ends_at: '9999-12-31T23:59:59.999Z' }).expect(201);
    expect(res.body).toMatchObject({ starts_at: '0001-01-01T00:00:00.000Z', ends_at: '9999-12-31T23:59:59.999Z' });
    expect((await c.get(`/events/${res.body.id}`)).body).toEqual(res.body);
  });
});
