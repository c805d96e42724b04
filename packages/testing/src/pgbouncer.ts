import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePorts } from './processes';
import { sleep } from './wait';

export interface PgBouncer {
  host: string;
  port: number;
  /** The same database URL, through PgBouncer. */
  urlFor(databaseUrl: string): string;
  /** Server connections in use per database (SHOW POOLS), for tests. */
  serverConnections(): Promise<Record<string, number>>;
  /** Stops PgBouncer (its clients' connections drop) and deletes its files. */
  stop(): Promise<void>;
}

const DEFAULT_UPSTREAM = 'postgresql://postgres@127.0.0.1:5432/postgres';
// Debian's package installs it here, outside a non-root user's PATH.
const KNOWN_PATHS = ['/usr/sbin/pgbouncer'];
// pgbouncer refuses to run as root; under root it runs as the first of these that exists.
const UNPRIVILEGED_USERS = ['postgres', 'nobody'];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function locate(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  return [...onPath.map((dir) => join(dir, 'pgbouncer')), ...KNOWN_PATHS].find(isExecutable);
}

const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * The pgbouncer binary: on PATH or at /usr/sbin/pgbouncer; else, as root on a machine with apt-get
 * (this one, CI), Debian's `pgbouncer` package is installed first. Throws one line naming what is
 * missing and how to get it.
 */
export function findPgBouncer(): string {
  const found = locate();
  if (found) return found;
  const howTo = 'install it (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer) or put it on PATH';
  if (!isRoot() || !isExecutable('/usr/bin/apt-get')) throw new Error(`pgbouncer not found on PATH or at /usr/sbin/pgbouncer: ${howTo}`);
  // The lock timeout lets two test processes that both need it install it one after the other.
  const apt = (args: string[]) =>
    spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      encoding: 'utf8',
      timeout: 600_000,
    });
  const steps = [['update'], ['install', '-y', '--no-install-recommends', 'pgbouncer']];
  for (const args of steps) {
    const result = apt(args);
    if (result.status !== 0) {
      const reason = (result.stderr || result.error?.message || '').trim().split('\n').pop();
      throw new Error(`pgbouncer not found, and apt-get ${args[0]} failed (${reason}): ${howTo}`);
    }
  }
  const installed = locate();
  if (!installed) throw new Error(`pgbouncer not found after apt-get install pgbouncer: ${howTo}`);
  return installed;
}

/** uid and gid of a local user, or undefined when there is none. */
function localUser(name: string): { name: string; uid: number; gid: number } | undefined {
  const id = (flag: string) => spawnSync('id', [flag, name], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

// Every PgBouncer this process started and its directory, killed and deleted if it exits without stop().
const running = new Map<ChildProcess, string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [child, dir] of running) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** One `key = value` line of pgbouncer.ini's [databases] connection string, quoted as it requires. */
const connectionValue = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * Starts PgBouncer in `pool_mode = transaction` on a free loopback port in front of `upstream`'s
 * server: every database name goes through (a wildcard `[databases]` entry to the upstream host and
 * port), clients are trusted on loopback (as the upstream URL's user or `postgres`, the names its
 * auth file lists; either may read SHOW POOLS), `poolSize` server connections per database and user
 * (default 20), `maxClientConn` clients in all (default 500). Its config, log and pid files live in
 * a temporary directory that stop() deletes; it dies with this process (parent-death signal, and
 * an exit hook). As root it runs as the `postgres` user (else `nobody`): pgbouncer refuses root.
 *
 * node-postgres opens a connection with `user`, `database` and `client_encoding` (and
 * `application_name` when one is set), all of which PgBouncer tracks itself, so no startup
 * parameter has to be ignored; `statement_timeout`, `lock_timeout`, `options` and the like, which
 * pg only sends when configured, would be refused rather than silently dropped.
 */
export async function startPgBouncer(options: { upstream?: string; poolSize?: number; maxClientConn?: number } = {}): Promise<PgBouncer> {
  const binary = findPgBouncer();
  installExitHook();
  const upstream = new URL(options.upstream ?? process.env.DATABASE_URL ?? DEFAULT_UPSTREAM);
  const upstreamUser = decodeURIComponent(upstream.username || 'postgres');
  const port = (await freePorts(1))[0]!;
  const host = '127.0.0.1';

  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const runAs = isRoot() ? UNPRIVILEGED_USERS.map(localUser).find((user) => user !== undefined) : undefined;
  if (isRoot() && !runAs) throw new Error(`pgbouncer refuses to run as root, and none of the users ${UNPRIVILEGED_USERS.join(', ')} exists to run it as`);
  const files = { config: join(dir, 'pgbouncer.ini'), users: join(dir, 'userlist.txt'), log: join(dir, 'pgbouncer.log'), pid: join(dir, 'pgbouncer.pid') };

  const server = [`host=${connectionValue(upstream.hostname || '127.0.0.1')}`, `port=${upstream.port || '5432'}`];
  if (upstream.password) server.push(`password=${connectionValue(decodeURIComponent(upstream.password))}`);
  // `trust` still wants every user name in the auth file.
  const users = [...new Set([upstreamUser, 'postgres'])];
  writeFileSync(files.users, users.map((user) => `"${user.replace(/"/g, '""')}" ""\n`).join(''));
  writeFileSync(
    files.config,
    [
      '[databases]',
      `* = ${server.join(' ')}`,
      '',
      '[pgbouncer]',
      `listen_addr = ${host}`,
      `listen_port = ${port}`,
      // No unix socket: the default directory (/tmp) is shared with every other pgbouncer of the machine.
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${files.users}`,
      `admin_users = ${users.join(',')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      `max_client_conn = ${options.maxClientConn ?? 500}`,
      `logfile = ${files.log}`,
      `pidfile = ${files.pid}`,
      '',
    ].join('\n'),
  );
  if (runAs) {
    chownSync(dir, runAs.uid, runAs.gid);
    for (const file of [files.config, files.users]) chownSync(file, runAs.uid, runAs.gid);
  }
  chmodSync(dir, 0o700);

  // setpriv (util-linux) execs pgbouncer in place (its pid is the child's, unlike runuser, which
  // forks) and asks the kernel to SIGKILL it when this process dies, however it dies.
  const [command, args] = runAs
    ? ['setpriv', [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--init-groups', '--pdeathsig=KILL', '--', binary, files.config]]
    : [binary, [files.config]];
  // A process group of its own, as the Redis nodes have: a terminal's Ctrl-C reaches the launcher,
  // which stops the platform before its pooler.
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  running.set(child, dir);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => (running.delete(child), resolve())));
  child.once('error', (err) => (stderr += err.message));

  const admin = (): pg.Client => new pg.Client({ host, port, user: upstreamUser, database: 'pgbouncer', connectionTimeoutMillis: 5_000 });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM is pgbouncer's immediate shutdown; SIGINT would wait for every transaction to end.
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`pgbouncer exited (${child.exitCode ?? child.signalCode}) on port ${port}: ${stderr.trim().split('\n').pop() ?? ''}`);
    }
    const probe = admin();
    try {
      await probe.connect();
      await probe.query('SHOW VERSION');
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`pgbouncer did not answer on port ${port}: ${(err as Error).message}`, { cause: err });
      }
      await sleep(50);
    } finally {
      await probe.end().catch(() => undefined);
    }
  }

  return {
    host,
    port,
    urlFor(databaseUrl: string): string {
      const url = new URL(databaseUrl);
      url.hostname = host;
      url.port = String(port);
      return url.toString();
    },
    async serverConnections(): Promise<Record<string, number>> {
      const client = admin();
      await client.connect();
      try {
        // The admin console speaks the simple query protocol only: no parameters.
        const { rows } = await client.query<{ database: string; sv_active: string | number }>('SHOW POOLS');
        const inUse: Record<string, number> = {};
        for (const row of rows) if (row.database !== 'pgbouncer') inUse[row.database] = (inUse[row.database] ?? 0) + Number(row.sv_active);
        return inUse;
      } finally {
        await client.end();
      }
    },
    stop,
  };
}
