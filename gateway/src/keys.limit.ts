/**
 * The API keys a workspace holds (GATEWAY_WORKSPACE_MAX_API_KEYS bounds them): its keys that are
 * neither revoked, expired nor replaced by a roll. A revoked or expired key never works again (no
 * change extends an expiry, and a roll refuses both), so it is history, not something held. A roll
 * replaces its key with the new one: the workspace holds as many keys after it as before, so a roll
 * is never refused, unless its key was replaced already (a second roll of one key, during the first
 * one's overlap), which adds a key as a create does and is counted like one.
 */

import { quotaReached, type QuotaReached } from '@platform/core';

/** One more key is refused once `held` reaches `limit`, as every quota is (core's quotaReached; a lowered limit removes nothing). */
export function apiKeysLimitReached(held: number, limit: number): QuotaReached | undefined {
  return quotaReached('api_keys', held, limit);
}

/** Whether rolling this key adds a held key: only when an earlier roll replaced it already. */
export function rollAddsHeldKey(key: { rolledAt: Date | null }): boolean {
  return key.rolledAt !== null;
}
