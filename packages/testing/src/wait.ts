export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What `check` returns while the awaited state is not there yet. */
type NotYet = undefined | false;

/**
 * Polls `check` every `everyMs` until it returns a value other than undefined/false and returns
 * that value; a `check` that throws is polled again (the last error is in the timeout message).
 * Fails after `timeoutMs` (default a minute: generous for a loaded machine, where a wait for an event
 * should fail only when the event never comes) with "timed out waiting for <what>".
 */
export async function waitFor<T>(what: string, check: () => Promise<T | NotYet> | T | NotYet, timeoutMs = 60_000, everyMs = 25): Promise<Exclude<T, NotYet>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Exclude<T, NotYet>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`, { cause: lastError });
    }
    await sleep(everyMs);
  }
}
