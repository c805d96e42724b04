-- Tracing: the W3C traceparent of the span that wrote the outbox row (null when tracing is off), so
-- each webhook delivery of the change links to the change's trace.

-- AlterTable
ALTER TABLE "outbox_events" ADD COLUMN "traceparent" TEXT;
