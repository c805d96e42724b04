import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sleep } from './stats';

const CLOCK_TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** User + system CPU time a process has used, in ms (Linux /proc; 10 ms resolution). */
export function cpuTimeMs(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export interface ExtraProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** A node process outside the platform launcher (the Express variant), ready once /healthz answers. */
export async function spawnNode(entry: string, args: string[], env: Record<string, string>, port: number): Promise<ExtraProcess> {
  const child = spawn(process.execPath, [...args, entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output = (output + c).slice(-20_000)));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output = (output + c).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.once('exit', () => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited during start:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${entry} did not answer /healthz:\n${output}`);
    }
    await sleep(100);
  }
  return {
    child,
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
