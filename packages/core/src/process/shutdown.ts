import type { Logger } from 'pino';

export interface ShutdownStep {
  name: string;
  /** May return a promise, which is awaited. */
  run: () => unknown;
}

/**
 * Runs named steps in order, each once, all of them even when one fails, under one deadline;
 * then exits (0 when every step finished in time). Call the returned function from signal handlers.
 */
export function gracefulShutdown(steps: ShutdownStep[], logger: Logger, deadlineMs = 10_000): (signal: string) => Promise<void> {
  let started: Promise<void> | undefined;
  return (signal: string) => {
    started ??= (async () => {
      logger.info({ signal }, 'shutting down');
      let ok = true;
      const deadline = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), deadlineMs).unref());
      for (const step of steps) {
        try {
          const outcome = await Promise.race([Promise.resolve().then(step.run), deadline]);
          if (outcome === 'timeout') {
            ok = false;
            logger.error({ step: step.name }, 'shutdown deadline passed');
            break;
          }
        } catch (err) {
          ok = false;
          logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      logger.info({ ok }, 'shutdown complete');
      logger.flush?.();
      process.exit(ok ? 0 : 1);
    })();
    return started;
  };
}

/** Registers SIGTERM and SIGINT to the shutdown. */
export function onShutdownSignals(shutdown: (signal: string) => Promise<void>): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
}
