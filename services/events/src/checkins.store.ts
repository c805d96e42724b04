import { afterCursor, LIST_ORDER, workspaceScoped, type Cursor, type SeriesWindow, type WorkspaceId } from '@platform/core';
import { recordOutboxEvents } from '@platform/webhooks';
import type { Database } from './database';
import { renderTicket } from './events.render';
import { Prisma, type Checkin, type Ticket } from './generated/prisma/client';
import {
  decideUpload,
  gateCountChanges,
  type Attempt,
  type CheckinBucketRow,
  type EventFigures,
  type LockedTicket,
  type ScanCheckin,
  type ScanInput,
  type ScanResult,
} from './checkins';

export type { Checkin };

type Tx = Prisma.TransactionClient;

/** A ticket row `t` as raw SQL returns it, in the client's field names. */
export const TICKET = Prisma.raw(
  `t."id", t."workspace_id" AS "workspaceId", t."event_id" AS "eventId", t."holder_name" AS "holderName", t."metadata",
   t."status"::text AS "status", t."validated_at" AS "validatedAt", t."validator_id" AS "validatorId", t."gate",
   t."created_at" AS "createdAt", t."updated_at" AS "updatedAt"`,
);

/** One upload (500 scans, many tickets) may wait behind others on the same tickets: more room than Prisma's 5 s default. */
const UPLOAD_TRANSACTION = { maxWait: 10_000, timeout: 30_000 };

export type ValidationOutcome =
  { outcome: 'validated'; ticket: Ticket } | { outcome: 'already_validated'; ticket: Ticket } | { outcome: 'not_found' } | { outcome: 'wrong_event' };

export type ReversalOutcome = { outcome: 'unvalidated'; ticket: Ticket } | { outcome: 'not_validated' } | { outcome: 'not_found' };

/** A validation or refused duplicate: a scan's, or an online call's (no scan id). */
type AttemptCheckin = Omit<ScanCheckin, 'scanId'> & { scanId: string | null };

/** A check-in to record: an attempt's, or a reversal's (a reason). */
interface CheckinRecord {
  ticketId: string;
  action: Checkin['action'];
  at: Date;
  gate: string | null;
  validatorId: string | null;
  scanId: string | null;
  reason?: string;
}

/** The INSERT of check-ins; ids are drawn in row order (ORDINALITY), so check-ins of one `at` list in the order given. */
function checkinsInsert(workspaceId: WorkspaceId, eventId: string, checkins: readonly CheckinRecord[]): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "checkins" ("id", "workspace_id", "event_id", "ticket_id", "action", "at", "gate", "validator_id", "scan_id", "reason")
    SELECT checkin_id(c."at"), ${workspaceId}::uuid, ${eventId}::uuid, c."ticket_id", c."action"::"checkin_action", c."at", c."gate", c."validator_id", c."scan_id", c."reason"
      FROM unnest(${checkins.map((c) => c.ticketId)}::uuid[], ${checkins.map((c) => c.action)}::text[], ${checkins.map((c) => c.at.toISOString())}::timestamptz[],
                  ${checkins.map((c) => c.gate)}::text[], ${checkins.map((c) => c.validatorId)}::uuid[], ${checkins.map((c) => c.scanId)}::text[],
                  ${checkins.map((c) => c.reason ?? null)}::text[])
           WITH ORDINALITY AS c("ticket_id", "action", "at", "gate", "validator_id", "scan_id", "reason", "n")
     ORDER BY c."n"`;
}

/**
 * Records validations and refused duplicates with what they add to the per-gate counters, in one
 * statement: the counter changes are derived here from the check-ins, so the two never disagree.
 * Counters are upserted in gate order, so concurrent writers lock them in one order; they only
 * grow here (a CHECK refuses a negative proposed row before ON CONFLICT applies: undo decrements
 * with an UPDATE).
 */
async function recordAttempts(tx: Tx, workspaceId: WorkspaceId, eventId: string, attempts: readonly AttemptCheckin[]): Promise<void> {
  if (attempts.length === 0) return;
  const changes = gateCountChanges(attempts);
  await tx.$executeRaw`
    WITH "recorded" AS (${checkinsInsert(workspaceId, eventId, attempts)})
    INSERT INTO "event_gate_counts" AS g ("event_id", "gate", "validated", "rejected_duplicates")
    SELECT ${eventId}::uuid, c."gate", c."validated", c."rejected_duplicates"
      FROM unnest(${changes.map((c) => c.gate)}::text[], ${changes.map((c) => c.validated)}::int[], ${changes.map((c) => c.rejectedDuplicates)}::int[])
           WITH ORDINALITY AS c("gate", "validated", "rejected_duplicates", "n")
     ORDER BY c."n"
    ON CONFLICT ("event_id", "gate") DO UPDATE
       SET "validated" = g."validated" + excluded."validated", "rejected_duplicates" = g."rejected_duplicates" + excluded."rejected_duplicates"`;
}

/** Marks a locked, issued ticket validated; `updated_at` from the database's clock. */
async function markValidated(tx: Tx, workspaceId: WorkspaceId, ticketId: string, at: Date, attempt: Attempt): Promise<Ticket | undefined> {
  const [ticket] = await tx.$queryRaw<Ticket[]>`
    UPDATE "tickets" t
       SET "status" = 'validated', "validated_at" = ${at}::timestamptz, "gate" = ${attempt.gate}, "validator_id" = ${attempt.validatorId}::uuid, "updated_at" = clock_timestamp()
     WHERE t."id" = ${ticketId}::uuid AND t."workspace_id" = ${workspaceId}::uuid AND t."status" = 'issued'
       AND (${attempt.eventId}::uuid IS NULL OR t."event_id" = ${attempt.eventId}::uuid)
    RETURNING ${TICKET}`;
  return ticket;
}

async function recordValidation(tx: Tx, workspaceId: WorkspaceId, ticket: Ticket, at: Date, attempt: Attempt): Promise<ValidationOutcome> {
  await recordAttempts(tx, workspaceId, ticket.eventId, [
    { ticketId: ticket.id, action: 'validated', at, gate: attempt.gate, validatorId: attempt.validatorId, scanId: null },
  ]);
  await recordOutboxEvents(tx, [{ type: 'ticket.validated', workspaceId, data: renderTicket(ticket) }], at);
  return { outcome: 'validated', ticket };
}

/**
 * Every change of a ticket's check-in state, each in one transaction with its check-in record,
 * its gate counters and its webhook event. Exactly-once lives in the database: a conditional
 * UPDATE (`status = 'issued'`) decides a validation, the primary key of `scans` a scan_id.
 */
export function checkinsStore(db: Database) {
  return workspaceScoped({
    /**
     * An online validation at `at`. The conditional UPDATE decides; a loser locks the ticket to
     * say why (unknown, another event, or validated: then its refused attempt is recorded while
     * the validation that beat it stands). A ticket undone between the two validates now.
     */
    validate(workspaceId: WorkspaceId, ticketId: string, attempt: Attempt, at: Date): Promise<ValidationOutcome> {
      return db.$transaction(async (tx) => {
        const won = await markValidated(tx, workspaceId, ticketId, at, attempt);
        if (won) return recordValidation(tx, workspaceId, won, at, attempt);
        const [ticket] = await tx.$queryRaw<Ticket[]>`
          SELECT ${TICKET} FROM "tickets" t WHERE t."id" = ${ticketId}::uuid AND t."workspace_id" = ${workspaceId}::uuid FOR UPDATE`;
        if (!ticket) return { outcome: 'not_found' };
        if (attempt.eventId !== null && ticket.eventId !== attempt.eventId) return { outcome: 'wrong_event' };
        if (ticket.status === 'issued') {
          const now = await markValidated(tx, workspaceId, ticketId, at, attempt);
          return recordValidation(tx, workspaceId, now!, at, attempt);
        }
        await recordAttempts(tx, workspaceId, ticket.eventId, [
          { ticketId, action: 'rejected_duplicate', at, gate: attempt.gate, validatorId: attempt.validatorId, scanId: null },
        ]);
        return { outcome: 'already_validated', ticket };
      });
    },

    /**
     * One upload of offline scans (first of each scan_id) to an event of the workspace. Each
     * scan_id is claimed by inserting its row (a retried or concurrent upload waits for the
     * claim, then finds it taken); the claimed scans' tickets are locked in id order, so
     * uploads and online validations never wait on each other in a circle. Returns every scan's
     * result: decided now for the claimed ones, as recorded before for the others.
     */
    upload(workspaceId: WorkspaceId, eventId: string, scans: readonly ScanInput[]): Promise<Map<string, ScanResult>> {
      return db.$transaction(async (tx) => {
        const claimedRows = await tx.$queryRaw<{ scan_id: string }[]>`
          INSERT INTO "scans" ("event_id", "scan_id", "workspace_id", "ticket_id")
          SELECT ${eventId}::uuid, s."scan_id", ${workspaceId}::uuid, s."ticket_id"
            FROM unnest(${scans.map((s) => s.scanId)}::text[], ${scans.map((s) => s.ticketId)}::uuid[]) AS s("scan_id", "ticket_id")
           ORDER BY s."scan_id" COLLATE "C"
          ON CONFLICT DO NOTHING
          RETURNING "scan_id"`;
        const claimedIds = new Set(claimedRows.map((row) => row.scan_id));
        const claimed = scans.filter((scan) => claimedIds.has(scan.scanId));
        const results = new Map<string, ScanResult>();

        if (claimed.length > 0) {
          const locked = await tx.$queryRaw<LockedTicket[]>`
            SELECT t."id", t."event_id" AS "eventId", t."status"::text AS "status", t."validated_at" AS "validatedAt", t."validator_id" AS "validatorId", t."gate"
              FROM "tickets" t
             WHERE t."workspace_id" = ${workspaceId}::uuid AND t."id" = ANY(${[...new Set(claimed.map((s) => s.ticketId))]}::uuid[])
             ORDER BY t."id"
               FOR UPDATE`;
          const decision = decideUpload(eventId, claimed, new Map(locked.map((ticket) => [ticket.id, ticket])));
          for (const result of decision.results) results.set(result.scanId, result);
          await applyUpload(tx, workspaceId, eventId, decision.validations, decision.checkins, decision.results);
        }

        const replayed = scans.filter((scan) => !claimedIds.has(scan.scanId)).map((scan) => scan.scanId);
        if (replayed.length > 0) {
          const recorded = await tx.$queryRaw<ScanResult[]>`
            SELECT s."scan_id" AS "scanId", s."ticket_id" AS "ticketId", s."status"::text AS "status", s."validated_at" AS "validatedAt",
                   s."validator_id" AS "validatorId", s."gate"
              FROM "scans" s WHERE s."event_id" = ${eventId}::uuid AND s."scan_id" = ANY(${replayed}::text[])`;
          for (const result of recorded) results.set(result.scanId, result);
        }
        return results;
      }, UPLOAD_TRANSACTION);
    },

    /** Undoes a validation: the ticket is issued again, its validation fields null. */
    unvalidate(workspaceId: WorkspaceId, ticketId: string, reason: string, at: Date): Promise<ReversalOutcome> {
      return db.$transaction(async (tx) => {
        const [ticket] = await tx.$queryRaw<(Ticket & { previousGate: string | null })[]>`
          WITH "previous" AS (
            SELECT "id", "gate" FROM "tickets" WHERE "id" = ${ticketId}::uuid AND "workspace_id" = ${workspaceId}::uuid AND "status" = 'validated' FOR UPDATE
          )
          UPDATE "tickets" t
             SET "status" = 'issued', "validated_at" = NULL, "gate" = NULL, "validator_id" = NULL, "updated_at" = clock_timestamp()
            FROM "previous" p
           WHERE t."id" = p."id"
          RETURNING ${TICKET}, p."gate" AS "previousGate"`;
        if (!ticket) {
          const exists = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "tickets" WHERE "id" = ${ticketId}::uuid AND "workspace_id" = ${workspaceId}::uuid`;
          return { outcome: exists.length > 0 ? 'not_validated' : 'not_found' };
        }
        const { previousGate, ...unvalidated } = ticket;
        await tx.$executeRaw(
          checkinsInsert(workspaceId, ticket.eventId, [{ ticketId, action: 'unvalidated', at, gate: null, validatorId: null, scanId: null, reason }]),
        );
        // The validation being undone counted at its gate, so the row is there.
        await tx.$executeRaw`
          UPDATE "event_gate_counts" SET "validated" = "validated" - 1 WHERE "event_id" = ${ticket.eventId}::uuid AND "gate" = ${previousGate ?? ''}`;
        await recordOutboxEvents(tx, [{ type: 'ticket.unvalidated', workspaceId, data: { ...renderTicket(unvalidated), reason } }], at);
        return { outcome: 'unvalidated', ticket: unvalidated };
      });
    },

    /** A ticket's check-ins, oldest first, in (at, id) order. */
    listCheckins(workspaceId: WorkspaceId, ticketId: string, page: { after: Cursor | undefined; take: number }): Promise<Checkin[]> {
      return db.checkin.findMany({ where: { workspaceId, ticketId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },

    /** The event's live figures in one statement (one snapshot), from its counters; undefined for no such event. */
    async figures(workspaceId: WorkspaceId, eventId: string): Promise<EventFigures | undefined> {
      const [row] = await db.$queryRaw<{ ticketsTotal: number; gates: { gate: string; validated: number }[]; rejectedDuplicates: bigint; asOf: Date }[]>`
        SELECT e."tickets_total" AS "ticketsTotal",
               COALESCE((SELECT json_agg(json_build_object('gate', c."gate", 'validated', c."validated") ORDER BY c."gate" = '', c."gate" COLLATE "C")
                           FROM "event_gate_counts" c WHERE c."event_id" = e."id" AND c."validated" > 0), '[]'::json) AS "gates",
               COALESCE((SELECT sum(c."rejected_duplicates") FROM "event_gate_counts" c WHERE c."event_id" = e."id"), 0)::bigint AS "rejectedDuplicates",
               statement_timestamp() AS "asOf"
          FROM "events" e
         WHERE e."id" = ${eventId}::uuid AND e."workspace_id" = ${workspaceId}::uuid`;
      return row && { ...row, rejectedDuplicates: Number(row.rejectedDuplicates) };
    },

    /**
     * The event's check-ins per bucket of the window and gate, by action and by `at`: one row per
     * bucket and gate seen anywhere in the window (zeros included), or one row with gate null per
     * bucket when the window has none. Reads one range of the ("event_id", "at") index.
     */
    series(workspaceId: WorkspaceId, eventId: string, window: SeriesWindow): Promise<CheckinBucketRow[]> {
      return db.$queryRaw<CheckinBucketRow[]>`
        WITH "counts" AS (
          SELECT date_trunc(${window.interval}::text, c."at", 'UTC') AS "start", COALESCE(c."gate", '') AS "gate",
                 count(*) FILTER (WHERE c."action" = 'validated')::int AS "validated",
                 count(*) FILTER (WHERE c."action" = 'unvalidated')::int AS "unvalidated",
                 count(*) FILTER (WHERE c."action" = 'rejected_duplicate')::int AS "rejectedDuplicates"
            FROM "checkins" c
           WHERE c."event_id" = ${eventId}::uuid AND c."workspace_id" = ${workspaceId}::uuid
             AND c."at" >= ${window.from}::timestamptz AND c."at" < ${window.to}::timestamptz
           GROUP BY 1, 2
        ), "gates" AS (
          SELECT DISTINCT "gate" FROM "counts"
        )
        SELECT b."start", g."gate", COALESCE(n."validated", 0) AS "validated", COALESCE(n."unvalidated", 0) AS "unvalidated",
               COALESCE(n."rejectedDuplicates", 0) AS "rejectedDuplicates"
          FROM generate_series(${window.from}::timestamptz, ${window.to}::timestamptz - ${window.step}::interval, ${window.step}::interval) AS b("start")
          LEFT JOIN "gates" g ON true
          LEFT JOIN "counts" n ON n."start" = b."start" AND n."gate" = g."gate"
         ORDER BY b."start", g."gate" = '', g."gate" COLLATE "C"`;
    },
  });
}
export type CheckinsStore = ReturnType<typeof checkinsStore>;

/** Writes what an upload decided: the validations, the check-ins, the gate counters, each claimed scan's result and the webhook events. */
async function applyUpload(
  tx: Tx,
  workspaceId: WorkspaceId,
  eventId: string,
  validations: readonly ScanInput[],
  checkins: readonly ScanCheckin[],
  results: readonly ScanResult[],
): Promise<void> {
  const validated =
    validations.length === 0
      ? []
      : await tx.$queryRaw<Ticket[]>`
          UPDATE "tickets" t
             SET "status" = 'validated', "validated_at" = v."validated_at", "gate" = v."gate", "validator_id" = v."validator_id", "updated_at" = clock_timestamp()
            FROM unnest(${validations.map((v) => v.ticketId)}::uuid[], ${validations.map((v) => v.scannedAt.toISOString())}::timestamptz[],
                        ${validations.map((v) => v.gate)}::text[], ${validations.map((v) => v.validatorId)}::uuid[]) AS v("ticket_id", "validated_at", "gate", "validator_id")
           WHERE t."id" = v."ticket_id" AND t."workspace_id" = ${workspaceId}::uuid AND t."status" = 'issued'
          RETURNING ${TICKET}`;
  // The tickets are locked by this transaction and were issued: every validation must land.
  if (validated.length !== validations.length) throw new Error(`upload validated ${validated.length} of ${validations.length} locked tickets`);
  await recordAttempts(tx, workspaceId, eventId, checkins);
  await tx.$executeRaw`
    UPDATE "scans" s
       SET "status" = r."status"::"scan_status", "validated_at" = r."validated_at", "validator_id" = r."validator_id", "gate" = r."gate"
      FROM unnest(${results.map((r) => r.scanId)}::text[], ${results.map((r) => r.status)}::text[], ${results.map((r) => r.validatedAt?.toISOString() ?? null)}::timestamptz[],
                  ${results.map((r) => r.validatorId)}::uuid[], ${results.map((r) => r.gate)}::text[]) AS r("scan_id", "status", "validated_at", "validator_id", "gate")
     WHERE s."event_id" = ${eventId}::uuid AND s."scan_id" = r."scan_id"`;
  const byTicket = new Map(validated.map((ticket) => [ticket.id, ticket]));
  await recordOutboxEvents(
    tx,
    validations.map((v) => ({ type: 'ticket.validated' as const, workspaceId, data: renderTicket(byTicket.get(v.ticketId)!) })),
  );
}
