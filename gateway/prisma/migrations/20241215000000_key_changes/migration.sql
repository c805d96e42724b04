-- The key-change log (contract sections 3, 16): one row per revoke, roll and edit, written in the
-- transaction that makes the change. Every gateway reads it every GATEWAY_KEY_CHANGES_POLL_MS and
-- drops the keys it names from its cache, so a change reaches every instance whether or not its
-- pub/sub announcement did. Rows are deleted 10 minutes after they were written.
CREATE TABLE "api_key_changes" (
    "seq" BIGSERIAL NOT NULL,
    -- The writing transaction's id (xid8 as bigint: 64 bits with its epoch, never wraps). A reader
    -- knows every transaction below its snapshot's xmin has ended, so no row below it can still
    -- appear, whatever order the seq values were committed in.
    "txid" BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    "key_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    -- The time of the insert, not of its transaction's start: retention counts from the write.
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "api_key_changes_pkey" PRIMARY KEY ("seq")
);

CREATE INDEX "api_key_changes_txid_seq_idx" ON "api_key_changes"("txid", "seq");

CREATE INDEX "api_key_changes_created_at_idx" ON "api_key_changes"("created_at");
