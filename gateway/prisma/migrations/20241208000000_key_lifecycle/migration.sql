-- Per-key rate limits (contract section 16): NULL = the platform's limits, else bucket name -> limit per minute.
ALTER TABLE "api_keys" ADD COLUMN "rate_limits" JSONB;

-- Requests per key per UTC hour by status class, counted in memory by each gateway and added here
-- periodically (no database write per request). Several gateways add to the same row.
CREATE TABLE "api_key_usage" (
    "key_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "status_2xx" BIGINT NOT NULL DEFAULT 0,
    "status_3xx" BIGINT NOT NULL DEFAULT 0,
    "status_4xx" BIGINT NOT NULL DEFAULT 0,
    "status_429" BIGINT NOT NULL DEFAULT 0,
    "status_5xx" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "api_key_usage_pkey" PRIMARY KEY ("key_id", "hour"),
    CONSTRAINT "api_key_usage_hour_check" CHECK ("hour" = date_trunc('hour', "hour", 'UTC'))
);

CREATE INDEX "api_key_usage_hour_idx" ON "api_key_usage"("hour");

ALTER TABLE "api_key_usage" ADD CONSTRAINT "api_key_usage_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One row per flush a gateway committed: a flush retried after a lost answer is recognised and
-- not added twice. Rows older than a day are pruned.
CREATE TABLE "api_key_usage_flushes" (
    "id" UUID NOT NULL,
    "flushed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_key_usage_flushes_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "api_key_usage_flushes_flushed_at_idx" ON "api_key_usage_flushes"("flushed_at");
