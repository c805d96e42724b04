import type { ChildProcess } from 'node:child_process';

// Children of every launcher of this process (platforms, Redis servers, clusters, sentinels),
// killed if the process exits without stopping them.
const everyChild = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills `child` with SIGKILL if this process exits while it still runs (a test run that ends without stop()). */
export function killWithThisProcess(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const running of everyChild) if (running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
    });
  }
  everyChild.add(child);
  child.once('exit', () => everyChild.delete(child));
}
