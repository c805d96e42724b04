import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

// Children of every launcher of this process (platforms, Redis servers, clusters, sentinels) and
// their temporary directories, killed and deleted if the process exits without stopping them.
const everyChild = new Set<ChildProcess>();
const everyDirectory = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const running of everyChild) if (running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
    for (const dir of everyDirectory) rmSync(dir, { recursive: true, force: true });
  });
}

/** Kills `child` with SIGKILL if this process exits while it still runs (a test run that ends without stop()). */
export function killWithThisProcess(child: ChildProcess): void {
  installExitHook();
  everyChild.add(child);
  child.once('exit', () => everyChild.delete(child));
}

/** Deletes `dir` when this process exits, unless forget() was called first (its owner deleted it). */
export function deleteWithThisProcess(dir: string): { forget(): void } {
  installExitHook();
  everyDirectory.add(dir);
  return { forget: () => everyDirectory.delete(dir) };
}
