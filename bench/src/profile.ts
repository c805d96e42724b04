import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  /** Sampled time not idle, ms. */
  busyMs: number;
  /** Whether only the samples inside the load window were counted (start-up excluded). */
  windowed: boolean;
  /** The heaviest functions by self time, share of busy time. */
  top: { frame: string; selfMs: number; share: number }[];
  /** Self time by where the code lives. */
  byArea: { area: string; selfMs: number; share: number }[];
}

/** Where a frame's code lives, coarse enough to read at a glance. */
function areaOf(frame: CpuProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)') return 'v8/native (program)';
  if (!url) return 'native';
  if (url.startsWith('node:internal/deps/undici') || url.includes('/undici/')) return 'undici';
  if (url.includes('/http-proxy-middleware/') || url.includes('/httpxy/')) return 'http-proxy-middleware';
  if (url.includes('/express/') || url.includes('/router/') || url.includes('/body-parser/') || url.includes('/finalhandler/') || url.includes('/send/'))
    return 'express';
  if (url.includes('/ioredis/') || url.includes('/redis-parser/') || url.includes('/denque/')) return 'ioredis';
  if (url.includes('/pino') || url.includes('/sonic-boom/')) return 'pino';
  if (url.includes('/gateway/dist/')) return 'gateway code';
  if (url.includes('/bench/dist/')) return 'bench code';
  if (url.includes('/packages/core/dist/')) return '@platform/core';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[1] === undefined ? url.slice(5) : url.slice(5).split('/').slice(0, 2).join('/')}`;
  return basename(url);
}

/** Now on the clock V8 stamps profile samples with (CLOCK_MONOTONIC, µs), for `window`. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Self time per function and per area of a `--cpu-prof` profile; with `window` (monotonic µs, as
 * monotonicUs() gives) only the samples inside it, so start-up and shutdown do not count.
 */
export function summarizeProfile(file: string, window?: { fromUs: number; toUs: number }, topN = 10): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const windowed = !!window && profile.startTime < window.toUs && profile.endTime > window.fromUs;
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (windowed && (at < window.fromUs || at > window.toUs)) continue;
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + delta);
  }
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busyUs += us;
    const frame =
      `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '').replace(/^file:\/\/.*\/main\//, '')}:${lineNumber + 1}` : ''}`.trim();
    frames.set(frame, (frames.get(frame) ?? 0) + us);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const rank = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    file: basename(file),
    busyMs: busyUs / 1000,
    windowed,
    top: rank(frames)
      .slice(0, topN)
      .map(([frame, us]) => ({ frame, selfMs: us / 1000, share: us / busyUs })),
    byArea: rank(areas).map(([area, us]) => ({ area, selfMs: us / 1000, share: us / busyUs })),
  };
}

/** The newest .cpuprofile in a directory. */
export function newestProfile(dir: string): string | undefined {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  return files.length ? join(dir, files[files.length - 1]!) : undefined;
}
