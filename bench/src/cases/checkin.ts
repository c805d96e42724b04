import { randomUUID } from 'node:crypto';
import { inParallel, type BenchContext } from '../context';
import { GatewayClient } from '../gateway-client';
import { runLoad } from '../load';
import { median, percentile, sleep } from '../stats';
import { validateViaGateway } from './proxy';

export interface CheckinPlan {
  /** Tickets of the one event every step works on. */
  tickets: number;
  /** Share of the tickets the offline scanners upload; the rest are left for the changes and the online scanners. */
  scannedShare: number;
  /** Share of the scans that name a ticket scanned before (in the same upload or another). */
  duplicateShare: number;
  scansPerUpload: number;
  /** Scanners uploading at the same time. */
  uploadClients: number;
  /** Validations and reversals between the full download and the delta. */
  changes: number;
  /** The delta asks for tickets changed after the newest `updated_at` seen minus this. */
  deltaMarginMs: number;
  /** Online scanners (connections) validating one ticket per request while stats are read. */
  onlineScanners: number;
  loadS: number;
  /** Stats reads and count queries, each, with nothing else running. */
  quietSamples: number;
}

export interface Transfer {
  requests: number;
  seconds: number;
  /** Response bodies as they came (gzip where the platform compressed them). */
  wireBytes: number;
  decodedBytes: number;
}

/** Latencies of the live figures, read three ways in turn. */
export interface FiguresLatency {
  samples: number;
  /** GET /events/{id}/stats through the gateway. */
  statsP50Ms: number;
  statsP99Ms: number;
  /** The rows that call reads (the event's ticket total and its per-gate counters), in SQL from the bench. */
  countersP50Ms: number;
  countersP99Ms: number;
  /** Validated tickets per gate counted in the tickets table, in SQL from the bench: the figures without counters. */
  countP50Ms: number;
  countP99Ms: number;
}

export type FullDownload = Transfer & {
  tickets: number;
  distinct: number;
  /** Median latency of the first and of the last tenth of the pages: a page that costs its position shows here. */
  firstPagesMs: number;
  lastPagesMs: number;
};

export interface CheckinResults {
  tickets: number;
  uploads: {
    clients: number;
    uploads: number;
    scans: number;
    distinctTickets: number;
    seconds: number;
    scansPerSecond: number;
    latencyP50Ms: number;
    latencyP99Ms: number;
    validated: number;
    alreadyValidated: number;
    /** Results that are neither (`not_found`, `wrong_event`): none expected. */
    otherStatuses: number;
    ticketsValidatedTwice: number;
    ticketsNeverValidated: number;
    /** Results not in request order, or whose validation fields are not those of the scan that validated the ticket. */
    resultsWrong: number;
    /** GET stats agrees with the uploads' results (total, issued, validated, per gate, rejected duplicates). */
    statsMatch: boolean;
    /** Validated tickets of the event counted in the table. */
    tableValidated: number;
  };
  replay: { seconds: number; scansPerSecond: number; identical: number; uploads: number; statsUnchanged: boolean };
  fullDownload: FullDownload;
  /** The same list asked for with `updated_since` at the epoch: the delta's path and index. */
  fullDownloadSinceEpoch: FullDownload;
  changes: { validations: number; unvalidations: number; seconds: number };
  delta: Transfer & {
    marginMs: number;
    tickets: number;
    changedIncluded: number;
    /** Changed tickets listed with another status than the change left them in. */
    wrongStatus: number;
    /** Tickets listed that were not among the changes (the quiet marker, and whatever else fell in the margin). */
    others: number;
  };
  stats: {
    onlineScanners: number;
    loadS: number;
    validationsPerSecond: number;
    validationP50Ms: number;
    validationP99Ms: number;
    scannerStatuses: Record<string, number>;
    quiet: FiguresLatency;
    underLoad: FiguresLatency;
    /** Stats right after the load equal the table's count. */
    consistentAfter: boolean;
  };
}

interface Scan {
  scan_id: string;
  ticket_id: string;
  scanned_at: string;
  gate: string;
  validator_id: string;
}

interface ScanResult {
  scan_id: string;
  ticket_id: string;
  status: string;
  validated_at: string | null;
  validator_id: string | null;
  gate: string | null;
}

interface EventStats {
  event_id: string;
  tickets: { total: number; issued: number; validated: number };
  gates: { gate: string | null; validated: number }[];
  rejected_duplicates: number;
  as_of: string;
}

interface ListedTicket {
  id: string;
  status: string;
  updated_at: string;
}

/** A small seeded generator (mulberry32), so every run uploads the same mix. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The offline scanners' uploads: every ticket of `tickets` once, in order, with a share of scans
 * of a ticket scanned before mixed in; `scanned_at` 10 ms apart, an hour ago; one gate and one
 * validator per scanner (batch `b` belongs to scanner `b % clients`).
 */
function offlineUploads(tickets: string[], plan: CheckinPlan): Scan[][] {
  const random = seeded(16);
  const validators = Array.from({ length: plan.uploadClients }, () => randomUUID());
  const firstScanAt = Date.now() - 3_600_000;
  const scans: Scan[] = [];
  let fresh = 0;
  while (fresh < tickets.length) {
    const i = scans.length;
    const duplicate = fresh > 0 && random() < plan.duplicateShare;
    const ticketId = duplicate ? tickets[Math.floor(random() * fresh)]! : tickets[fresh++]!;
    const scanner = Math.floor(i / plan.scansPerUpload) % plan.uploadClients;
    scans.push({
      scan_id: `scan-${i}`,
      ticket_id: ticketId,
      scanned_at: new Date(firstScanAt + i * 10).toISOString(),
      gate: `gate-${scanner + 1}`,
      validator_id: validators[scanner]!,
    });
  }
  return Array.from({ length: Math.ceil(scans.length / plan.scansPerUpload) }, (_, b) => scans.slice(b * plan.scansPerUpload, (b + 1) * plan.scansPerUpload));
}

async function uploadAll(
  client: GatewayClient,
  eventId: string,
  uploads: Scan[][],
  clients: number,
): Promise<{ texts: string[]; latencies: number[]; seconds: number }> {
  const started = performance.now();
  const answers = await inParallel(uploads, clients, (scans) => client.expect(200, 'POST', `/events/v0/events/${eventId}/scans`, { scans }));
  const seconds = (performance.now() - started) / 1000;
  return { texts: answers.map((a) => a.text), latencies: answers.map((a) => a.ms).sort((x, y) => x - y), seconds };
}

/** What the uploads' results say, checked against the scans that were sent. */
function checkResults(uploads: Scan[][], texts: string[]) {
  const validatedBy = new Map<string, Scan>();
  const duplicates: ScanResult[] = [];
  const counts = { validated: 0, alreadyValidated: 0, otherStatuses: 0, ticketsValidatedTwice: 0, resultsWrong: 0 };
  const sameValidation = (r: ScanResult, scan: Scan) => r.validated_at === scan.scanned_at && r.gate === scan.gate && r.validator_id === scan.validator_id;
  uploads.forEach((scans, u) => {
    const results = (JSON.parse(texts[u]!) as { results: ScanResult[] }).results;
    if (results.length !== scans.length) counts.resultsWrong += Math.abs(results.length - scans.length);
    results.forEach((r, i) => {
      const scan = scans[i];
      if (!scan || r.scan_id !== scan.scan_id || r.ticket_id !== scan.ticket_id) {
        counts.resultsWrong++;
      } else if (r.status === 'validated') {
        counts.validated++;
        if (validatedBy.has(r.ticket_id)) counts.ticketsValidatedTwice++;
        validatedBy.set(r.ticket_id, scan);
        if (!sameValidation(r, scan)) counts.resultsWrong++;
      } else if (r.status === 'already_validated') {
        counts.alreadyValidated++;
        duplicates.push(r);
      } else {
        counts.otherStatuses++;
      }
    });
  });
  // An already_validated result carries the original validation: the scan that validated the ticket.
  for (const r of duplicates) {
    const original = validatedBy.get(r.ticket_id);
    if (!original || !sameValidation(r, original)) counts.resultsWrong++;
  }
  const perGate = new Map<string | null, number>();
  for (const scan of validatedBy.values()) perGate.set(scan.gate, (perGate.get(scan.gate) ?? 0) + 1);
  return { ...counts, validatedBy, perGate };
}

function gatesOf(stats: EventStats): Map<string | null, number> {
  return new Map(stats.gates.map((g) => [g.gate, g.validated]));
}

function sameGates(a: Map<string | null, number>, b: Map<string | null, number>): boolean {
  return a.size === b.size && [...a].every(([gate, n]) => b.get(gate) === n);
}

async function readStats(client: GatewayClient, eventId: string): Promise<EventStats> {
  return JSON.parse((await client.expect(200, 'GET', `/events/v0/events/${eventId}/stats`)).text) as EventStats;
}

/** Validated tickets per gate straight from the tickets table: what GET stats would cost without counters. */
async function countValidatedPerGate(ctx: BenchContext, eventId: string): Promise<Map<string | null, number>> {
  const { rows } = await ctx.db.events.query<{ gate: string | null; validated: number }>(
    `SELECT gate, count(*)::int AS validated FROM tickets WHERE workspace_id = $1 AND event_id = $2 AND status = 'validated' GROUP BY gate`,
    [ctx.identity.workspaceId, eventId],
  );
  return new Map(rows.map((r) => [r.gate, r.validated]));
}

/** Resolves once `read` gives the same number twice, 500 ms apart (at most 10 s). */
async function untilStill(read: () => Promise<number>): Promise<void> {
  let previous = await read();
  for (let waited = 0; waited < 10_000; waited += 500) {
    await sleep(500);
    const now = await read();
    if (now === previous) return;
    previous = now;
  }
}

const total = (gates: Map<string | null, number>) => [...gates.values()].reduce((sum, n) => sum + n, 0);

/**
 * The event's tickets, written straight to the events database: 100,000 through the API would be
 * 100,000 requests of setup before anything is measured. As the API would have issued them: a
 * millisecond apart (lists order by these times), `updated_at` = `created_at`, and the event's
 * `tickets_total` counter raised in the same statement, so GET stats counts them.
 */
async function issueTickets(ctx: BenchContext, eventId: string, count: number): Promise<string[]> {
  const { rows } = await ctx.db.events.query<{ id: string }>(
    `WITH issued AS (
       INSERT INTO tickets (id, workspace_id, event_id, holder_name, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, 'Bench guest ' || i, t, t
         FROM generate_series(1, $3) AS i, LATERAL (SELECT now() - ($3 - i) * interval '1 millisecond' AS t) AS issued_at
       RETURNING id
     ), counted AS (
       UPDATE events SET tickets_total = tickets_total + $3 WHERE id = $2 AND workspace_id = $1
     )
     SELECT id FROM issued`,
    [ctx.identity.workspaceId, eventId, count],
  );
  return rows.map((r) => r.id);
}

/** Every page of the event's tickets (limit 100), as a scanner app downloads its list. */
async function downloadTickets(
  client: GatewayClient,
  eventId: string,
  updatedSince?: string,
): Promise<Transfer & { tickets: ListedTicket[]; pageMs: number[] }> {
  const tickets: ListedTicket[] = [];
  const pageMs: number[] = [];
  const transfer: Transfer = { requests: 0, seconds: 0, wireBytes: 0, decodedBytes: 0 };
  const started = performance.now();
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '100' });
    if (updatedSince) query.set('updated_since', updatedSince);
    if (cursor) query.set('cursor', cursor);
    const answer = await client.expect(200, 'GET', `/events/v0/events/${eventId}/tickets?${query.toString()}`);
    transfer.requests++;
    pageMs.push(answer.ms);
    transfer.wireBytes += answer.wireBytes;
    transfer.decodedBytes += answer.decodedBytes;
    const page = JSON.parse(answer.text) as { data: ListedTicket[]; next_cursor: string | null };
    for (const t of page.data) tickets.push({ id: t.id, status: t.status, updated_at: t.updated_at });
    cursor = page.next_cursor;
  } while (cursor);
  transfer.seconds = (performance.now() - started) / 1000;
  return { ...transfer, tickets, pageMs };
}

const rounded = (ms: number) => Math.round(ms * 100) / 100;

function summarizeDownload({ tickets, pageMs, ...transfer }: Transfer & { tickets: ListedTicket[]; pageMs: number[] }): FullDownload & { newest: string } {
  const tenth = Math.max(1, Math.floor(pageMs.length / 10));
  return {
    ...transfer,
    seconds: rounded(transfer.seconds),
    tickets: tickets.length,
    distinct: new Set(tickets.map((t) => t.id)).size,
    firstPagesMs: rounded(median(pageMs.slice(0, tenth))),
    lastPagesMs: rounded(median(pageMs.slice(-tenth))),
    newest: tickets.reduce((max, t) => (t.updated_at > max ? t.updated_at : max), ''),
  };
}

const omitNewest = ({ newest: _newest, ...download }: FullDownload & { newest: string }): FullDownload => download;

/** The rows GET stats reads: the event's ticket total and its gate counters. */
async function readCounters(ctx: BenchContext, eventId: string): Promise<void> {
  await ctx.db.events.query(
    `SELECT e.tickets_total, c.gate, c.validated, c.rejected_duplicates
       FROM events e LEFT JOIN event_gate_counts c ON c.event_id = e.id
      WHERE e.id = $1 AND e.workspace_id = $2`,
    [eventId, ctx.identity.workspaceId],
  );
}

const figures = (f: FiguresLatency) =>
  `stats p50 ${f.statsP50Ms} ms p99 ${f.statsP99Ms} ms, counters ${f.countersP50Ms} / ${f.countersP99Ms} ms, count ${f.countP50Ms} / ${f.countP99Ms} ms (${f.samples} samples)`;

async function timed(read: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await read();
  return performance.now() - started;
}

/** GET stats, the counters and the count query in turn, until `until` says stop. */
async function sampleFigures(ctx: BenchContext, client: GatewayClient, eventId: string, until: () => boolean): Promise<FiguresLatency> {
  const samples = { stats: [] as number[], counters: [] as number[], count: [] as number[] };
  while (!until()) {
    samples.stats.push(await timed(() => client.expect(200, 'GET', `/events/v0/events/${eventId}/stats`)));
    samples.counters.push(await timed(() => readCounters(ctx, eventId)));
    samples.count.push(await timed(() => countValidatedPerGate(ctx, eventId)));
  }
  const [stats, counters, count] = [samples.stats, samples.counters, samples.count].map((values) => values.sort((a, b) => a - b)) as [
    number[],
    number[],
    number[],
  ];
  const p = (values: number[], q: number) => rounded(percentile(values, q));
  return {
    samples: stats.length,
    statsP50Ms: p(stats, 0.5),
    statsP99Ms: p(stats, 0.99),
    countersP50Ms: p(counters, 0.5),
    countersP99Ms: p(counters, 0.99),
    countP50Ms: p(count, 0.5),
    countP99Ms: p(count, 0.99),
  };
}

/**
 * Check-in at scale (contract 15), all through the gateway with the platform's key (the bench
 * platform's events limit is BENCH_EVENTS_LIMIT, so the 400 a minute of one token never paces
 * it; the limiter still runs): one event of `plan.tickets` tickets (written straight to the
 * database, see issueTickets).
 * 1. Offline scanners upload 500-scan batches concurrently; then every result is checked (one
 *    validation per ticket, duplicates carry the original) and GET stats against them.
 * 2. The same uploads again: every answer must be byte-identical, the stats unchanged.
 * 3. A scanner app downloads the whole list, `plan.changes` validations and reversals follow,
 *    and it downloads the delta (`updated_since` = newest `updated_at` seen − margin). One
 *    validation after a quiet pause longer than the margin comes first, so the delta holds the
 *    changes and that one ticket, not the tail of the uploads.
 * 4. GET stats and the same figures counted in SQL, quiet and while online scanners validate.
 */
export async function checkinCase(ctx: BenchContext, plan: CheckinPlan): Promise<CheckinResults> {
  const { platform, log } = ctx;
  const client = new GatewayClient(platform.gatewayUrl, platform.token);
  try {
    const event = JSON.parse(
      (await client.expect(201, 'POST', '/events/v0/events', { name: 'Bench check-in', starts_at: new Date(Date.now() + 86_400_000).toISOString() })).text,
    ) as { id: string };
    const eventId = event.id;
    log(`issuing ${plan.tickets} tickets`);
    const tickets = await issueTickets(ctx, eventId, plan.tickets);
    const scannedCount = Math.round(plan.tickets * plan.scannedShare);
    const changeCount = { validations: Math.floor(plan.changes / 2), unvalidations: plan.changes - Math.floor(plan.changes / 2) };
    const scanned = tickets.slice(0, scannedCount);
    const toValidate = tickets.slice(scannedCount, scannedCount + changeCount.validations);
    const marker = tickets[scannedCount + changeCount.validations]!;
    const forOnlineScanners = tickets.slice(scannedCount + changeCount.validations + 1);

    // 1. Offline uploads.
    const uploads = offlineUploads(scanned, plan);
    const scanCount = uploads.reduce((sum, u) => sum + u.length, 0);
    log(`uploading ${scanCount} scans of ${scanned.length} tickets in ${uploads.length} uploads, ${plan.uploadClients} at a time`);
    const first = await uploadAll(client, eventId, uploads, plan.uploadClients);
    const checked = checkResults(uploads, first.texts);
    const statsAfterUploads = await readStats(client, eventId);
    const tableGates = await countValidatedPerGate(ctx, eventId);
    const statsMatch =
      statsAfterUploads.tickets.total === plan.tickets &&
      statsAfterUploads.tickets.validated === checked.validatedBy.size &&
      statsAfterUploads.tickets.issued === plan.tickets - checked.validatedBy.size &&
      statsAfterUploads.rejected_duplicates === checked.alreadyValidated &&
      sameGates(gatesOf(statsAfterUploads), checked.perGate);
    if (!statsMatch)
      log(
        `  stats do not match the results: ${JSON.stringify(statsAfterUploads)}; results: ${checked.validatedBy.size} validated, ${checked.alreadyValidated} duplicates`,
      );
    const uploadResults: CheckinResults['uploads'] = {
      clients: plan.uploadClients,
      uploads: uploads.length,
      scans: scanCount,
      distinctTickets: scanned.length,
      seconds: rounded(first.seconds),
      scansPerSecond: Math.round(scanCount / first.seconds),
      latencyP50Ms: rounded(percentile(first.latencies, 0.5)),
      latencyP99Ms: rounded(percentile(first.latencies, 0.99)),
      validated: checked.validated,
      alreadyValidated: checked.alreadyValidated,
      otherStatuses: checked.otherStatuses,
      ticketsValidatedTwice: checked.ticketsValidatedTwice,
      ticketsNeverValidated: scanned.length - checked.validatedBy.size,
      resultsWrong: checked.resultsWrong,
      statsMatch,
      tableValidated: total(tableGates),
    };
    log(
      `  ${uploadResults.scansPerSecond} scans/s (${uploadResults.seconds} s), upload p50 ${uploadResults.latencyP50Ms} ms p99 ${uploadResults.latencyP99Ms} ms; ` +
        `${checked.validated} validated, ${checked.alreadyValidated} already validated, ${checked.otherStatuses} other; ` +
        `${uploadResults.ticketsValidatedTwice} validated twice, ${uploadResults.ticketsNeverValidated} never, ${checked.resultsWrong} wrong results; ` +
        `stats ${statsMatch ? 'match' : 'DO NOT match'}, table ${uploadResults.tableValidated} validated`,
    );

    // 2. Replay.
    log('replaying every upload');
    const again = await uploadAll(client, eventId, uploads, plan.uploadClients);
    const identical = again.texts.filter((text, i) => text === first.texts[i]).length;
    const statsAfterReplay = await readStats(client, eventId);
    const statsUnchanged = JSON.stringify({ ...statsAfterReplay, as_of: '' }) === JSON.stringify({ ...statsAfterUploads, as_of: '' });
    const replay = {
      seconds: rounded(again.seconds),
      scansPerSecond: Math.round(scanCount / again.seconds),
      identical,
      uploads: uploads.length,
      statsUnchanged,
    };
    log(
      `  ${replay.seconds} s (${replay.scansPerSecond} scans/s); ${identical} of ${uploads.length} answers byte-identical; stats ${statsUnchanged ? 'unchanged' : 'CHANGED'}`,
    );

    // 3. Full download, changes, delta.
    await sleep(plan.deltaMarginMs + 1_000);
    await client.expect(200, 'POST', `/events/v0/tickets/${marker}/validate`, { gate: 'quiet-marker' });
    log(`full download of ${plan.tickets} tickets`);
    const full = summarizeDownload(await downloadTickets(client, eventId));
    log(
      `  ${full.seconds} s (pages: first tenth ${full.firstPagesMs} ms, last tenth ${full.lastPagesMs} ms), ${full.requests} requests, ${full.wireBytes} bytes on the wire (${full.decodedBytes} decoded); newest updated_at ${full.newest}`,
    );
    // The same list through the updated_since path ((event_id, updated_at, id) index) from the epoch.
    const fullSinceEpoch = summarizeDownload(await downloadTickets(client, eventId, new Date(0).toISOString()));
    log(
      `  with updated_since=${new Date(0).toISOString()}: ${fullSinceEpoch.seconds} s (pages ${fullSinceEpoch.firstPagesMs} → ${fullSinceEpoch.lastPagesMs} ms), ${fullSinceEpoch.requests} requests, ${fullSinceEpoch.distinct} tickets`,
    );

    const toUnvalidate = [...checked.validatedBy.keys()].slice(0, changeCount.unvalidations);
    const expected = new Map<string, string>([...toValidate.map((id) => [id, 'validated'] as const), ...toUnvalidate.map((id) => [id, 'issued'] as const)]);
    const changesStarted = performance.now();
    await inParallel([...expected], 8, ([id, status]) =>
      status === 'validated'
        ? client.expect(200, 'POST', `/events/v0/tickets/${id}/validate`, { gate: 'gate-late' })
        : client.expect(200, 'POST', `/events/v0/tickets/${id}/unvalidate`, { reason: 'Scanned by mistake (bench)' }),
    );
    const changes = { ...changeCount, seconds: rounded((performance.now() - changesStarted) / 1000) };
    const updatedSince = new Date(Date.parse(full.newest) - plan.deltaMarginMs).toISOString();
    const delta = await downloadTickets(client, eventId, updatedSince);
    const listed = new Map(delta.tickets.map((t) => [t.id, t.status]));
    const { tickets: deltaTickets, pageMs: _pageMs, ...deltaTransfer } = delta;
    const deltaResults: CheckinResults['delta'] = {
      ...deltaTransfer,
      seconds: rounded(delta.seconds),
      marginMs: plan.deltaMarginMs,
      tickets: deltaTickets.length,
      changedIncluded: [...expected.keys()].filter((id) => listed.has(id)).length,
      wrongStatus: [...expected].filter(([id, status]) => listed.has(id) && listed.get(id) !== status).length,
      others: [...listed.keys()].filter((id) => !expected.has(id)).length,
    };
    log(
      `  ${plan.changes} changes in ${changes.seconds} s; delta since ${updatedSince}: ${Math.round(delta.seconds * 1000)} ms, ${delta.requests} requests, ` +
        `${delta.wireBytes} bytes on the wire (${delta.decodedBytes} decoded), ${deltaResults.tickets} tickets: ` +
        `${deltaResults.changedIncluded} of ${expected.size} changed, ${deltaResults.wrongStatus} with a wrong status, ${deltaResults.others} others`,
    );

    // 4. Stats, quiet and under online scanners.
    let quietLeft = plan.quietSamples;
    const quiet = await sampleFigures(ctx, client, eventId, () => quietLeft-- <= 0);
    log(`stats under ${plan.onlineScanners} online scanners for ${plan.loadS} s`);
    let nextTicket = 0;
    let loading = true;
    const load = runLoad({
      url: platform.gatewayUrl,
      connections: plan.onlineScanners,
      durationS: plan.loadS,
      // Past the fresh tickets the scanners meet validated ones (409): still a validation attempt each.
      next: () => validateViaGateway(platform.token, forOnlineScanners[nextTicket++ % forOnlineScanners.length]!),
    }).finally(() => (loading = false));
    await sleep(500);
    const underLoad = await sampleFigures(ctx, client, eventId, () => !loading);
    const scanners = await load;
    // The load generator stops at its deadline without waiting for the answers still on their way:
    // those validations commit after it returns, so the comparison waits until the table is still.
    await untilStill(() => countValidatedPerGate(ctx, eventId).then(total));
    const statsAfterLoad = await readStats(client, eventId);
    const tableAfterLoad = await countValidatedPerGate(ctx, eventId);
    const consistentAfter = statsAfterLoad.tickets.validated === total(tableAfterLoad) && sameGates(gatesOf(statsAfterLoad), tableAfterLoad);
    if (!consistentAfter) log(`  stats after the load: ${JSON.stringify(statsAfterLoad)}; the table: ${JSON.stringify([...tableAfterLoad])}`);
    const stats: CheckinResults['stats'] = {
      onlineScanners: plan.onlineScanners,
      loadS: plan.loadS,
      validationsPerSecond: Math.round(scanners.rps),
      validationP50Ms: rounded(scanners.p50),
      validationP99Ms: rounded(scanners.p99),
      scannerStatuses: scanners.statusCounts,
      quiet,
      underLoad,
      consistentAfter,
    };
    log(
      `  quiet: ${figures(stats.quiet)}; under load (${stats.validationsPerSecond} validations/s, ${JSON.stringify(scanners.statusCounts)}): ` +
        `${figures(stats.underLoad)}; stats ${consistentAfter ? 'equal' : 'DIFFER FROM'} the table after the load`,
    );
    return {
      tickets: plan.tickets,
      uploads: uploadResults,
      replay,
      fullDownload: omitNewest(full),
      fullDownloadSinceEpoch: omitNewest(fullSinceEpoch),
      changes,
      delta: deltaResults,
      stats,
    };
  } finally {
    client.close();
  }
}
