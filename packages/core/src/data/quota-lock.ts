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
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`, `quota:${scope}:${workspaceId}`);
}
