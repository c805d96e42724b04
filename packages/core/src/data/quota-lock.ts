import type { WorkspaceId } from '../http/http';
import type { WorkspaceLimitName } from './quotas';

/** Anything that runs raw SQL inside a transaction: a Prisma transaction client, @platform/webhooks' SqlClient. */
export interface RawSqlTransaction {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/**
 * What a group of quotas counts in one service database: `pipelines` covers pipelines and
 * scheduled_pipelines (a create checks both), `webhook_endpoints` the service's endpoints, and each
 * platform limit (quotas.ts, WORKSPACE_LIMIT_NAMES) its own records.
 */
export type QuotaLockScope = 'pipelines' | 'webhook_endpoints' | WorkspaceLimitName;

/** The longest a create waits for its workspace's quota lock: well inside Prisma's 5 s transaction timeout. */
export const QUOTA_LOCK_TIMEOUT_MS = 2_000;

/**
 * Serialises, until `tx` ends, the creates and changes of one workspace that count against one
 * group of quotas, so a count followed by the insert in the same transaction cannot be passed by a
 * concurrent one (contract section 20). A transaction-scoped advisory lock: it is released with the
 * transaction, so it works through PgBouncer in transaction mode.
 *
 * Lock key: `hashtextextended('quota:<scope>:<workspace id>', 0)`, one bigint per (scope, workspace)
 * in each service's database. A hash collision only makes two workspaces wait on each other.
 */
export async function lockWorkspaceQuota(tx: RawSqlTransaction, scope: QuotaLockScope, workspaceId: WorkspaceId): Promise<void> {
  // A wait past QUOTA_LOCK_TIMEOUT_MS ends in 55P03 (lock_not_available), answered 503 with
  // Retry-After: a storm of creates in one workspace never outlives its transaction's own timeout
  // (which would end in an error that is no one's fault but the load's).
  await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = ${QUOTA_LOCK_TIMEOUT_MS}`);
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`, quotaLockKey(scope, workspaceId));
}

/**
 * The shared side of lockWorkspaceQuota's lock, until `tx` ends: any number of holders at once, none
 * while lockWorkspaceQuota holds it, and lockWorkspaceQuota waits until every holder has ended. For a
 * create that checks its quota without the lock while far from the limit: holding this from before
 * its count to its commit, it is seen by the count of any create that takes the lock after it.
 *
 * No lock_timeout of its own (it would last to the end of `tx` and bound every later wait, e.g. for a
 * busy row): it waits only while lockWorkspaceQuota is held or awaited, and QUOTA_LOCK_TIMEOUT_MS
 * bounds both the waits of a holder and the wait of an awaiting one.
 */
export async function lockWorkspaceQuotaShared(tx: RawSqlTransaction, scope: QuotaLockScope, workspaceId: WorkspaceId): Promise<void> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock_shared(hashtextextended($1::text, 0))`, quotaLockKey(scope, workspaceId));
}

/** The text whose hash is the advisory lock of (scope, workspace), e.g. for a test that holds it from another session. */
export function quotaLockKey(scope: QuotaLockScope, workspaceId: WorkspaceId): string {
  return `quota:${scope}:${workspaceId}`;
}
