import type { ApiKey as ApiKeyResource, ApiKeyWithToken, UsageBucket as UsageBucketResource, Workspace as WorkspaceResource } from '@platform/admin-api';
import { timestamp } from '@platform/core';
import type { ApiKey, UsageBucket, Workspace } from './keys.store';

/** A workspace as the admin API shows it. */
export function renderWorkspace(workspace: Workspace): WorkspaceResource {
  return { id: workspace.id, name: workspace.name, created_at: timestamp(workspace.createdAt) };
}

/** An API key as the admin API shows it; `token` only on the answer that created it. */
export function renderApiKey(key: ApiKey, token?: string): ApiKeyResource | ApiKeyWithToken {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    rate_limits: key.rateLimits,
    ...(token === undefined ? {} : { token }),
    token_prefix: key.tokenPrefix,
    created_at: timestamp(key.createdAt),
    expires_at: timestamp(key.expiresAt),
    revoked_at: timestamp(key.revokedAt),
    last_used_at: timestamp(key.lastUsedAt),
  };
}

/** One hour or day of a key's usage: its requests per status class and their sum. */
export function renderUsageBucket(bucket: UsageBucket): UsageBucketResource {
  const counts = bucket.counts;
  return {
    start: timestamp(bucket.start),
    requests: counts['2xx'] + counts['3xx'] + counts['4xx'] + counts['429'] + counts['5xx'],
    by_status: counts,
  };
}
