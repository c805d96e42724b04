-- Runs that wait behind their pipeline's active run (contract section 19, concurrency_policy "enqueue").
-- On its own: a new enum value can be used only once the transaction that added it has committed.
ALTER TYPE "run_status" ADD VALUE IF NOT EXISTS 'pending' BEFORE 'queued';
