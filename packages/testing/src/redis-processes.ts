import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { deleteWithThisProcess, killWithThisProcess } from './child-registry';
import { sleep } from './wait';

/** A Redis server of a cluster or a Sentinel group, as clients name it. */
export interface RedisNode {
  host: string;
  port: number;
}

export interface RedisBinaries {
  server: string;
  cli: string;
}

let found: RedisBinaries | undefined;
let setprivRuns: boolean | undefined;

function answersVersion(binary: string): string | undefined {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return result.status === 0 ? result.stdout : undefined;
}

/**
 * `redis-server` and `redis-cli` from PATH; where they are missing and this process is root with
 * apt-get, Debian's `redis-server` (which brings redis-tools) is installed first. Otherwise one
 * line saying what is missing. Redis 7 or newer: the cluster bus port is set with `cluster-port`.
 */
export function findRedisBinaries(): RedisBinaries {
  if (found) return found;
  const binaries = { server: 'redis-server', cli: 'redis-cli' };
  const missing = () => Object.values(binaries).filter((binary) => answersVersion(binary) === undefined);
  if (missing().length > 0 && process.getuid?.() === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    // The lock timeout lets two test processes that both need it install it one after the other.
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', 'redis-server'],
    ]) {
      spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { stdio: 'ignore', env, timeout: 600_000 });
    }
  }
  const stillMissing = missing();
  if (stillMissing.length > 0) throw new Error(`${stillMissing.join(' and ')} not found on PATH: install Redis 7 or newer (apt-get install redis-server)`);
  const major = Number(/v=(\d+)\./.exec(answersVersion(binaries.server) ?? '')?.[1] ?? 0);
  if (major < 7) throw new Error(`redis-server on PATH is older than Redis 7 (cluster-port is needed): install Redis 7 or newer`);
  found = binaries;
  return binaries;
}

/** One `redis-server` process (a cluster node, a master, a replica or a sentinel) on a loopback port. */
export interface RedisProcess extends RedisNode {
  /** Where its configuration, nodes.conf and log live. */
  dir: string;
  running(): boolean;
  /** Signals it (default SIGKILL) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again with the same arguments (same port, same dir), resolves once it answers PING. */
  start(): Promise<void>;
  /** Its log file so far. */
  log(): string;
}

/**
 * Spawns `redis-server <args...>` (a config file, `--sentinel`, or options), killed with this
 * process, and resolves once it answers PING on `port`. `logfile` is `<dir>/redis.log`.
 */
export async function spawnRedisProcess(options: { port: number; dir: string; args: string[]; startTimeoutMs?: number }): Promise<RedisProcess> {
  const { server } = findRedisBinaries();
  const logFile = `${options.dir}/redis.log`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  // setpriv (util-linux) execs redis-server in place and has the kernel SIGKILL it when this process
  // dies, however it dies (a SIGKILLed test runner included); the exit hook covers the rest.
  setprivRuns ??= spawnSync('setpriv', ['--pdeathsig=KILL', '--', 'true'], { stdio: 'ignore' }).status === 0;
  const [command, args] = setprivRuns ? ['setpriv', ['--pdeathsig=KILL', '--', server, ...options.args]] : [server, options.args];
  const start = async () => {
    // A process group of its own: a terminal's Ctrl-C reaches the launcher, which stops the platform
    // before its Redis, instead of every Redis node dying under the platform's processes at once.
    const proc = spawn(command, args, { cwd: options.dir, stdio: 'ignore', detached: true });
    killWithThisProcess(proc);
    proc.once('error', () => undefined);
    child = proc;
    exited = new Promise((resolveExit) => proc.once('exit', () => resolveExit()));
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    for (;;) {
      if (!running()) throw new Error(`redis-server exited during start on port ${options.port}:\n${tail(logFile)}`);
      if ((await redisCommand({ host: '127.0.0.1', port: options.port }, ['PING']).catch(() => undefined)) === 'PONG') return;
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${options.port}:\n${tail(logFile)}`);
      await sleep(50);
    }
  };
  await start();
  return {
    host: '127.0.0.1',
    port: options.port,
    dir: options.dir,
    running,
    kill: async (signal = 'SIGKILL') => {
      if (running()) child!.kill(signal);
      await exited;
    },
    start: async () => {
      if (running()) return;
      await start();
    },
    log: () => tail(logFile, Infinity),
  };
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * One command on one server over a connection of its own, closed after it: a node that is down
 * fails within about a second instead of being retried.
 */
export async function redisCommand(node: RedisNode, args: string[]): Promise<unknown> {
  const redis = new Redis({
    host: node.host,
    port: node.port,
    lazyConnect: true,
    connectTimeout: 1_000,
    commandTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(args[0]!, ...args.slice(1));
  } finally {
    redis.disconnect();
  }
}

/** `INFO <section>` as name → value. */
export async function redisInfo(node: RedisNode, section: string): Promise<Record<string, string>> {
  const text = String(await redisCommand(node, ['INFO', section]));
  return parseInfo(text);
}

/** `a:b\r\n...` (INFO, CLUSTER INFO) as name → value. */
export function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

/** Redis processes started together under one temporary folder (a cluster, a Sentinel group), stopped together. */
export interface RedisProcessGroup {
  root: string;
  processes: Map<string, RedisProcess>;
  /** Kills every process and deletes the folder; the same promise however often it is called. */
  stop(): Promise<void>;
  /** The process of a node of this group; throws for another address. */
  processOf(node: RedisNode): RedisProcess;
}

export function redisProcessGroup(name: string, what: string): RedisProcessGroup {
  const root = mkdtempSync(join(tmpdir(), `${name}-`));
  const rootOnExit = deleteWithThisProcess(root);
  const processes = new Map<string, RedisProcess>();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await Promise.all([...processes.values()].map((p) => p.kill('SIGKILL')));
      rmSync(root, { recursive: true, force: true });
      rootOnExit.forget();
    })());
  const processOf = (node: RedisNode): RedisProcess => {
    const found = processes.get(`${node.host}:${node.port}`);
    if (!found) throw new Error(`${node.host}:${node.port} is not ${what}`);
    return found;
  };
  return { root, processes, stop, processOf };
}
