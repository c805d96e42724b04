-- The API keys a workspace holds, bounded by GATEWAY_WORKSPACE_MAX_API_KEYS: neither revoked, expired
-- nor replaced by a roll. A roll sets "rolled_at" on the key it replaces (which keeps working until
-- its overlap ends): that key no longer counts, its successor does, so a roll adds nothing; rolling
-- the same key again adds one and is counted like a create. Keys rolled before this migration have
-- no "rolled_at" and count until their overlap (at most 7 days) ends.
ALTER TABLE "api_keys" ADD COLUMN "rolled_at" TIMESTAMPTZ(3);

-- A create counts the workspace's held keys under its quota lock, on this index: it leaves revoked and
-- replaced keys out, however many a workspace has.
CREATE INDEX "api_keys_held_workspace_id_expires_at_idx" ON "api_keys"("workspace_id", "expires_at")
    WHERE "revoked_at" IS NULL AND "rolled_at" IS NULL;
