/** What a periodic run sees of close(). */
export interface StopRequest {
  /** True once close() was called: a run ends at its next step. */
  readonly requested: boolean;
  /**
   * Resolves when close() is called, to end a wait early. Race it once, not on every run: each
   * race leaves a reaction on this promise until it resolves.
   */
  readonly whenRequested: Promise<void>;
}

/** Work repeated until closed. */
export interface PeriodicTask {
  /** Stops scheduling and waits for the run in flight; safe to call more than once. */
  close(): Promise<void>;
}

/**
 * The one loop of the platform's background sweepers (webhook relay, requeue and retention; run,
 * scan and reservation retention): runs `run` after `firstDelayMs`, then again `intervalMs` after each run ends. A run that throws
 * goes to `onError` and the next one comes as usual, so a database or Redis outage is retried,
 * never fatal. Runs never overlap.
 */
export function runPeriodically(
  run: (stop: StopRequest) => Promise<void>,
  options: { firstDelayMs: number; intervalMs: number; onError: (err: unknown) => void },
): PeriodicTask {
  let requestStop!: () => void;
  const whenRequested = new Promise<void>((resolve) => (requestStop = resolve));
  const stop = { requested: false, whenRequested };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closing: Promise<void> | undefined;

  function schedule(delayMs: number): void {
    if (stop.requested) return;
    timer = setTimeout(() => {
      running = run(stop).then(
        () => schedule(options.intervalMs),
        (err: unknown) => {
          options.onError(err);
          schedule(options.intervalMs);
        },
      );
    }, delayMs);
    // Background work never keeps a process alive on its own: its owner closes it at shutdown.
    timer.unref();
  }

  schedule(options.firstDelayMs);
  return {
    close() {
      closing ??= (async () => {
        stop.requested = true;
        requestStop();
        clearTimeout(timer);
        await running;
      })();
      return closing;
    },
  };
}
