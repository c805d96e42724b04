/** The quotas of a workspace (contract section 20), by name. */
export const QUOTA_NAMES = ['pipelines', 'scheduled_pipelines', 'webhook_endpoints', 'idempotency_bytes'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];
