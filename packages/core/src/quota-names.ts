// No imports: `@platform/core/quota-names` names the quotas for a command line that must start
// without loading the rest of core (the `platform` CLI's help).

/** The quotas of a workspace (contract section 20), by name. */
export const QUOTA_NAMES = ['pipelines', 'scheduled_pipelines', 'webhook_endpoints', 'idempotency_bytes'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];
