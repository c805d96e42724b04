import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startPlatform, uniqueDatabaseName, type Platform } from '@platform/testing';

// Issue 16's race on the real platform (gateway + events service from the built dist, real
// PostgreSQL and Redis): 20 offline uploads and 30 online validations of overlapping tickets, all
// at once. Every ticket is validated exactly once; every other attempt is a refused duplicate in
// its history; one ticket.validated event per validation; replaying the uploads changes nothing.

const TICKETS = 40;
const UPLOADS = 20;
const SCANS_PER_UPLOAD = 25;
const ONLINE = 30;

let platform: Platform;
let db: pg.Client;

beforeAll(async () => {
  platform = await startPlatform({ name: uniqueDatabaseName('events_race'), processes: ['events', 'gateway'] });
  db = new pg.Client({ connectionString: platform.databaseUrls.events });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await platform?.stop();
});

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${platform.gatewayUrl}/events/v0${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

test('20 uploads and 30 online validations of overlapping tickets at once: each ticket validated exactly once; replays change nothing', async () => {
  const setup = platform.token;
  const event = await call(setup, 'POST', '/events', { name: 'Race', starts_at: '2025-06-01T18:00:00Z' });
  expect(event.status).toBe(201);
  const tickets: string[] = [];
  for (let i = 0; i < TICKETS; i++) tickets.push((await call(setup, 'POST', `/events/${event.json.id}/tickets`, { holder_name: `Racer ${i}` })).json.id);

  // Each upload scans 25 of the 40 tickets (every ticket in about 12 uploads), at times of its own.
  const base = Date.now() - 60 * 60_000;
  const uploads = Array.from({ length: UPLOADS }, (_, u) => ({
    scans: Array.from({ length: SCANS_PER_UPLOAD }, (_, k) => ({
      scan_id: `scanner-${u}-${k}`,
      ticket_id: tickets[(u * 7 + k) % TICKETS]!,
      scanned_at: new Date(base + ((u * 37 + k * 11) % 600) * 1_000).toISOString(),
      gate: `gate-${u % 4}`,
      validator_id: randomUUID(),
    })),
  }));
  const online = Array.from({ length: ONLINE }, (_, i) => ({ ticket: tickets[(i * 3) % TICKETS]!, body: { gate: 'online', event_id: event.json.id } }));

  const scanner = await platform.createApiKey({ name: 'race scanners' });
  const [uploadAnswers, onlineAnswers] = await Promise.all([
    Promise.all(uploads.map((body) => call(scanner.token, 'POST', `/events/${event.json.id}/scans`, body))),
    Promise.all(online.map((v) => call(scanner.token, 'POST', `/tickets/${v.ticket}/validate`, v.body))),
  ]);
  expect(uploadAnswers.map((a) => a.status)).toEqual(Array(UPLOADS).fill(200));
  expect(onlineAnswers.every((a) => a.status === 200 || a.status === 409)).toBe(true);

  // Who validated each ticket, as the answers tell it: exactly one winner per scanned ticket.
  const winners = new Map<string, string[]>();
  const attempts = new Map<string, number>();
  const count = (ticket: string, winner?: string) => {
    attempts.set(ticket, (attempts.get(ticket) ?? 0) + 1);
    if (winner) winners.set(ticket, [...(winners.get(ticket) ?? []), winner]);
  };
  uploadAnswers.forEach((answer, u) =>
    answer.json.results.forEach((result: { status: string; ticket_id: string; scan_id: string }, k: number) => {
      expect(result.scan_id).toBe(uploads[u]!.scans[k]!.scan_id);
      expect(['validated', 'already_validated']).toContain(result.status);
      count(result.ticket_id, result.status === 'validated' ? result.scan_id : undefined);
    }),
  );
  onlineAnswers.forEach((answer, i) => count(online[i]!.ticket, answer.status === 200 ? `online-${i}` : undefined));
  for (const ticket of tickets) expect(winners.get(ticket)).toHaveLength(1);

  // The database agrees: one validated check-in per ticket, every other attempt a refused duplicate.
  const history = await db.query<{ ticket_id: string; action: string; n: number }>(
    `SELECT ticket_id::text, action::text, count(*)::int AS n FROM checkins GROUP BY ticket_id, action`,
  );
  for (const ticket of tickets) {
    const rows = history.rows.filter((r) => r.ticket_id === ticket);
    expect(rows.find((r) => r.action === 'validated')?.n).toBe(1);
    expect(rows.find((r) => r.action === 'rejected_duplicate')?.n ?? 0).toBe(attempts.get(ticket)! - 1);
  }
  const outbox = await db.query<{ ticket_id: string; n: number }>(
    `SELECT data->>'id' AS ticket_id, count(*)::int AS n FROM outbox_events WHERE type = 'ticket.validated' GROUP BY 1`,
  );
  expect(outbox.rows.length).toBe(TICKETS);
  expect(outbox.rows.every((r) => r.n === 1)).toBe(true);

  const totalAttempts = [...attempts.values()].reduce((a, b) => a + b, 0);
  const stats = await call(scanner.token, 'GET', `/events/${event.json.id}/stats`);
  expect(stats.json).toMatchObject({ tickets: { total: TICKETS, issued: 0, validated: TICKETS }, rejected_duplicates: totalAttempts - TICKETS });
  // The validated ticket matches its winner.
  const sample = await call(scanner.token, 'GET', `/tickets/${tickets[0]}`);
  const winner = winners.get(tickets[0]!)![0]!;
  expect(sample.json.gate).toBe(winner.startsWith('online') ? 'online' : `gate-${Number(winner.split('-')[1]) % 4}`);

  // Replaying all 20 uploads at once: the same bytes, nothing new recorded.
  const before = (await db.query<{ n: number }>(`SELECT (SELECT count(*) FROM checkins) + (SELECT count(*) FROM outbox_events) AS n`)).rows[0]!.n;
  const replays = await Promise.all(uploads.map((body) => call(scanner.token, 'POST', `/events/${event.json.id}/scans`, body)));
  expect(replays.map((r) => r.text)).toEqual(uploadAnswers.map((a) => a.text));
  const after = (await db.query<{ n: number }>(`SELECT (SELECT count(*) FROM checkins) + (SELECT count(*) FROM outbox_events) AS n`)).rows[0]!.n;
  expect(after).toBe(before);
}, 60_000);

test('an upload of 500 scans is one request in the events bucket', async () => {
  const key = await platform.createApiKey({ name: 'bucket' });
  const event = await call(key.token, 'POST', '/events', { name: 'Bucket', starts_at: '2025-06-01T18:00:00Z' });
  const upload = (n: number) =>
    fetch(`${platform.gatewayUrl}/events/v0/events/${event.json.id}/scans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        scans: Array.from({ length: 500 }, (_, k) => ({ scan_id: `bucket-${n}-${k}`, ticket_id: randomUUID(), scanned_at: new Date().toISOString() })),
      }),
    });
  const first = await upload(1);
  const second = await upload(2);
  expect([first.status, second.status]).toEqual([200, 200]);
  expect(first.headers.get('x-ratelimit-limit')).toBe('400');
  expect(Number(first.headers.get('x-ratelimit-remaining')) - Number(second.headers.get('x-ratelimit-remaining'))).toBe(1);
  expect(((await second.json()) as { results: { status: string }[] }).results.every((r) => r.status === 'not_found')).toBe(true);
});
