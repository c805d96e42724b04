/**
 * The API keys a workspace holds (GATEWAY_WORKSPACE_MAX_API_KEYS bounds them): its keys that are
 * neither revoked, expired nor replaced by a roll. A revoked or expired key never works again (no
 * change extends an expiry, and a roll refuses both), so it is history, not something held. A roll
 * replaces its key with the new one: the workspace holds as many keys after it as before, so a roll
 * is never refused, unless its key was replaced already (a second roll of one key, during the first
 * one's overlap), which adds a key as a create does and is counted like one.
 */

/** What a store answers instead of writing when the workspace already holds its limit of API keys: nothing was written. */
export interface ApiKeysLimitReached {
  kind: 'limit_reached';
  limit: number;
}

/** One more key is refused once `held` reaches `limit` (a limit lowered below what a workspace holds removes nothing). */
export function apiKeysLimitReached(held: number, limit: number): ApiKeysLimitReached | undefined {
  return held >= limit ? { kind: 'limit_reached', limit } : undefined;
}

/** Whether rolling this key adds a held key: only when an earlier roll replaced it already. */
export function rollAddsHeldKey(key: { rolledAt: Date | null }): boolean {
  return key.rolledAt !== null;
}
