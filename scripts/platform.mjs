#!/usr/bin/env node
// The two commands a newcomer needs: `npm start` (the whole platform) and `npm test` (every test);
// `npm run test:unit` runs the unit tests alone, without any server; `npm run fleet` runs the
// platform as a fleet (Redis Cluster, PgBouncer, several instances of everything).
// Plain Node with no dependencies: it runs before anything is installed.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '10.34.8';
/** The Node major line the platform runs on, from package.json's `engines` (>=N): the current LTS. */
const NODE_MAJOR = Number(/\d+/.exec(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node)[0]);
const SERVICES = ['events', 'warehouse', 'pipelines'];

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** pnpm as installed, or fetched from the npm registry when missing (corepack cannot fetch it offline). */
function pnpmCommand() {
  const installed = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (installed.status === 0 && installed.stdout.trim() === PNPM_VERSION) return ['pnpm'];
  return ['npx', '-y', `pnpm@${PNPM_VERSION}`];
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', ...options });
  if (result.status !== 0) fail(`${[command, ...args].join(' ')} failed (exit ${result.status ?? result.signal})`);
  return result;
}

/** The bin/node of a Node NODE_MAJOR.x unpacked under `dir` by an earlier run, newest first. */
function cachedNode(dir) {
  if (!existsSync(dir)) return undefined;
  const versions = readdirSync(dir)
    .filter((name) => name.startsWith(`v${NODE_MAJOR}.`))
    .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return versions.map((name) => join(dir, name, 'bin', 'node')).find((path) => existsSync(path));
}

/**
 * On an older Node, the commands run again on Node NODE_MAJOR: the npm registry's official build
 * (`node-<platform>-<arch>`, the binary the `node` package installs), unpacked once under
 * ~/.cache/platform/node and put first on PATH, so pnpm, turbo, jest and the platform's processes
 * all run on it. Where that cannot be fetched, one line says how to get it.
 */
function ensureNodeRuntime() {
  if (Number(process.versions.node.split('.')[0]) >= NODE_MAJOR) return;
  const dir = join(homedir(), '.cache', 'platform', 'node');
  let node = cachedNode(dir);
  if (!node) {
    const pkg = `node-${process.platform}-${process.arch}@${NODE_MAJOR}`;
    process.stdout.write(`Node ${process.versions.node} is past its end of life; fetching Node ${NODE_MAJOR} (${pkg}) from the npm registry...\n`);
    mkdirSync(dir, { recursive: true });
    const packed = spawnSync('npm', ['pack', pkg, '--pack-destination', dir, '--json', '--silent'], { encoding: 'utf8' });
    const tarball = packed.status === 0 ? JSON.parse(packed.stdout)[0]?.filename : undefined;
    const staging = join(dir, 'unpacking');
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging);
    if (!tarball || spawnSync('tar', ['xzf', join(dir, tarball), '-C', staging]).status !== 0) {
      fail(
        `Node ${NODE_MAJOR} is needed (this is ${process.versions.node}): install it from https://nodejs.org or with \`nvm install ${NODE_MAJOR}\`, then run this again.`,
      );
    }
    const version = spawnSync(join(staging, 'package', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    renameSync(join(staging, 'package'), join(dir, version));
    rmSync(staging, { recursive: true, force: true });
    rmSync(join(dir, tarball), { force: true });
    node = cachedNode(dir);
  }
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  const result = spawnSync(node, process.argv.slice(1), { stdio: 'inherit', env });
  process.exit(result.status ?? 1);
}

function pnpm(args, options) {
  const [command, ...prefix] = pnpmCommand();
  return run(command, [...prefix, ...args], options);
}

function ensureDependencies() {
  const marker = join(ROOT, 'node_modules', '.modules.yaml');
  const lock = join(ROOT, 'pnpm-lock.yaml');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  process.stdout.write('Installing dependencies...\n');
  pnpm(['install', '--frozen-lockfile']);
}

/** Where `npm start` keeps this clone's admin token (git ignores .platform/): the same token on every start. */
const ADMIN_TOKEN_FILE = join(ROOT, '.platform', 'admin-token');

/** The admin token of this clone: made on the first start (no token is built in), read back afterwards. */
function localAdminToken() {
  if (existsSync(ADMIN_TOKEN_FILE)) return readFileSync(ADMIN_TOKEN_FILE, 'utf8').trim();
  mkdirSync(dirname(ADMIN_TOKEN_FILE), { recursive: true, mode: 0o700 });
  const token = `adm_${randomBytes(24).toString('base64url')}`;
  writeFileSync(ADMIN_TOKEN_FILE, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Connection settings from the environment, with one PostgreSQL server and one database per deployable. */
function platformEnv() {
  const base = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  const databaseUrl = (name) => {
    const url = new URL(base);
    url.pathname = `/platform_${name}`;
    return url.toString();
  };
  const env = {
    ...process.env,
    GATEWAY_DATABASE_URL: process.env.GATEWAY_DATABASE_URL ?? databaseUrl('gateway'),
    PLATFORM_ADMIN_TOKEN: process.env.PLATFORM_ADMIN_TOKEN ?? localAdminToken(),
    PLATFORM_INTERNAL_SECRET: process.env.PLATFORM_INTERNAL_SECRET ?? randomBytes(32).toString('base64url'),
    GATEWAY_PORT: process.env.GATEWAY_PORT ?? '8080',
    EVENTS_PORT: process.env.EVENTS_PORT ?? '4001',
    WAREHOUSE_PORT: process.env.WAREHOUSE_PORT ?? '4002',
    PIPELINES_PORT: process.env.PIPELINES_PORT ?? '4003',
  };
  // One Redis topology (contract 17): the local server unless a cluster or Sentinel is named.
  if (!env.REDIS_CLUSTER_NODES && !env.REDIS_SENTINELS) env.REDIS_URL ??= 'redis://127.0.0.1:6379';
  for (const service of SERVICES) {
    const key = `${service.toUpperCase()}_DATABASE_URL`;
    env[key] = process.env[key] ?? databaseUrl(service);
  }
  // The postgres destination refuses the platform's own databases by name, whatever they are called here.
  env.PIPELINES_PLATFORM_DATABASES ??= ['GATEWAY', ...SERVICES.map((s) => s.toUpperCase())]
    .map((name) => decodeURIComponent(new URL(env[`${name}_DATABASE_URL`]).pathname.slice(1)))
    .join(',');
  env.EVENTS_URL ??= `http://127.0.0.1:${env.EVENTS_PORT}`;
  env.WAREHOUSE_URL ??= `http://127.0.0.1:${env.WAREHOUSE_PORT}`;
  env.PIPELINES_URL ??= `http://127.0.0.1:${env.PIPELINES_PORT}`;
  return env;
}

function reachable(url, fallbackPort) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || fallbackPort) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function ensureBackends(env) {
  const hint = 'start them with `docker compose up -d postgres redis` (or your local servers)';
  if (!(await reachable(env.GATEWAY_DATABASE_URL, 5432))) fail(`PostgreSQL is not reachable at ${new URL(env.GATEWAY_DATABASE_URL).host}: ${hint}.`);
  const redisSeeds = env.REDIS_URL ? [new URL(env.REDIS_URL).host] : (env.REDIS_CLUSTER_NODES ?? env.REDIS_SENTINELS).split(',');
  const redisUp = await Promise.all(redisSeeds.map((seed) => reachable(`redis://${seed.trim()}`, 6379)));
  if (!redisUp.some(Boolean)) fail(`Redis is not reachable at ${redisSeeds.join(', ')}: ${hint}.`);
}

/**
 * The readiness loop of @platform/testing's waitForHttp, in plain Node (this file runs before
 * anything is installed or built): a GET answering 2xx, each attempt bounded by 1 s, failing at
 * once when the process exits, within 30 s (the launcher's start bound).
 */
async function waitForHealth(url, child, name, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      fail(`${name} exited during start (exit ${child.exitCode ?? child.signalCode}); see its log lines above.`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) fail(`${name} did not become healthy at ${url} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function prefixLines(stream, label, out) {
  let pending = '';
  stream.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) out.write(`${label} ${line}\n`);
  });
}

async function gatewayCall(base, token, method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'platform-version': '2024-12-01' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** A demo ticket and a demo pipeline made through `gateway`, and the curl lines that use them (what npm start and npm run fleet print). */
async function demoLines(gateway, token) {
  const lines = [];
  try {
    const event = await gatewayCall(gateway, token, 'POST', '/events/v0/events', {
      name: 'Demo concert',
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const ticket = await gatewayCall(gateway, token, 'POST', `/events/v0/events/${event.id}/tickets`, { holder_name: 'Demo guest' });
    lines.push(
      '',
      'Validate the demo ticket (a second call gives 409):',
      `  curl -X POST ${gateway}/events/v0/tickets/${ticket.id}/validate \\`,
      `    -H 'Authorization: Bearer ${token}' -H 'platform-version: 2024-12-01' \\`,
      `    -H 'content-type: application/json' -d '{"gate":"main-entrance","event_id":"${event.id}"}'`,
    );
  } catch (err) {
    lines.push(`(could not create the demo ticket: ${err.message})`);
  }
  try {
    const pipeline = await gatewayCall(gateway, token, 'POST', '/pipelines/v3/pipelines', {
      name: 'Demo sample sync',
      source: { connector: 'sample', config: { records: 1000, seed: 1 } },
      destination: { connector: 'postgres', config: { table: 'demo_records' } },
    });
    // Location is a path on the gateway (contract section 2): the second line puts the gateway before it.
    lines.push(
      '',
      'Trigger a run of the demo pipeline, then read it at the path its Location header names:',
      `  run=$(curl -s -o /dev/null -w '%header{location}' -X POST ${gateway}/pipelines/v3/pipelines/${pipeline.id}/runs \\`,
      `    -H 'Authorization: Bearer ${token}' -H 'content-type: application/json' -d '{"trigger":"manual"}')`,
      `  curl ${gateway}$run -H 'Authorization: Bearer ${token}'`,
    );
  } catch (err) {
    lines.push(`(could not create the demo pipeline: ${err.message})`);
  }
  return lines;
}

/** The lines that name the admin token, the demo workspace and key, and the CLI call that manages them. */
function accessLines(gateway, adminToken, workspaceId, token) {
  return [
    `Admin token (PLATFORM_ADMIN_TOKEN${process.env.PLATFORM_ADMIN_TOKEN ? '' : ', kept in .platform/admin-token'}): ${adminToken}`,
    `Demo workspace: ${workspaceId}`,
    `Demo API key:   ${token}`,
    'Manage workspaces and keys (the CLI calls the admin API with the admin token):',
    `  PLATFORM_URL=${gateway} PLATFORM_ADMIN_TOKEN=${adminToken} npx platform keys list --workspace ${workspaceId}`,
  ];
}

async function start() {
  ensureDependencies();
  const env = platformEnv();
  await ensureBackends(env);
  pnpm(['turbo', 'run', 'build', '--output-logs=errors-only'], { env });

  for (const dir of ['gateway', ...SERVICES.map((s) => `services/${s}`)]) {
    run(process.execPath, [join(dir, 'dist', 'migrate.js')], { env });
  }

  // Each process serves GET /metrics on a port of its own (METRICS_PORT is one variable per process).
  const processes = [
    ['events', 'services/events/dist/main.js', `http://127.0.0.1:${env.EVENTS_PORT}/healthz`, 9101],
    ['warehouse', 'services/warehouse/dist/main.js', `http://127.0.0.1:${env.WAREHOUSE_PORT}/healthz`, 9102],
    ['pipelines', 'services/pipelines/dist/main.js', `http://127.0.0.1:${env.PIPELINES_PORT}/healthz`, 9103],
    ['worker', 'services/pipelines/dist/worker.js', null, 9113],
    ['gateway', 'gateway/dist/main.js', `http://127.0.0.1:${env.GATEWAY_PORT}/healthz`, 9080],
  ];
  const children = [];
  let stopping = false;
  const stopAll = (code) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nStopping the platform...\n');
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
    const deadline = setTimeout(() => {
      for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
    }, 15_000);
    Promise.all(children.map(({ child }) => (child.exitCode !== null ? null : new Promise((r) => child.once('exit', r))))).then(() => {
      clearTimeout(deadline);
      process.exit(code);
    });
  };
  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));

  for (const [name, entry, health, metricsPort] of processes) {
    const child = spawn(process.execPath, ['--enable-source-maps', join(ROOT, entry)], {
      cwd: ROOT,
      env: { ...env, METRICS_PORT: String(metricsPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const label = `[${name}]`.padEnd(12);
    prefixLines(child.stdout.setEncoding('utf8'), label, process.stdout);
    prefixLines(child.stderr.setEncoding('utf8'), label, process.stderr);
    child.on('exit', (code, signal) => {
      if (!stopping) {
        process.stderr.write(`${name} exited (${code ?? signal}); stopping everything.\n`);
        stopAll(1);
      }
    });
    children.push({ name, child });
    if (health) await waitForHealth(health, child, name);
  }

  const seed = spawnSync(process.execPath, [join(ROOT, 'packages/cli/dist/main.js'), 'demo-seed'], { cwd: ROOT, env, encoding: 'utf8' });
  if (seed.status !== 0) {
    process.stderr.write(seed.stderr);
    stopAll(1);
    return;
  }
  const { workspace_id: workspaceId, token } = JSON.parse(seed.stdout);
  const gateway = `http://127.0.0.1:${env.GATEWAY_PORT}`;
  const lines = [
    '',
    '──────────────────────────────────────────────────────────────',
    `Platform running. Gateway: ${gateway} (GET / lists every address)`,
    `API reference:  ${gateway}/docs`,
    `Console:        ${gateway}/console (sign in with the admin token below)`,
    ...accessLines(gateway, env.PLATFORM_ADMIN_TOKEN, workspaceId, token),
    `Metrics:        ${processes.map(([name, , , port]) => `${name} :${port}`).join(', ')} (GET /metrics)`,
  ];
  lines.push(...(await demoLines(gateway, token)));
  lines.push('', 'Ctrl-C stops every process.', '──────────────────────────────────────────────────────────────', '');
  process.stdout.write(lines.join('\n'));
}

// What `npm run fleet` passes on to every process from this shell, as `npm start` does (the launcher
// gives its processes no other variable of the shell's that a deployable reads).
const FLEET_PASSED_VARIABLES = [
  'PIPELINES_SCHEDULE_MIN_INTERVAL_S',
  'PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS',
  'WEBHOOKS_ALLOW_PRIVATE',
  'CONNECTORS_ALLOW_PRIVATE',
];

/**
 * A fleet on this machine (contract section 17): a Redis Cluster (3 masters, 3 replicas), PgBouncer
 * in transaction mode, 2 gateways (GATEWAY_PORT and the next port), 2 instances of each service
 * behind a round-robin balancer each, 2 run workers, seeded with the demo workspace and key. It is
 * @platform/testing's startFleet, built first. A Redis node or a process that dies is reported and
 * the fleet runs on; Ctrl-C stops all of it.
 */
async function fleet() {
  ensureDependencies();
  const databaseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  if (!(await reachable(databaseUrl, 5432)))
    fail(`PostgreSQL is not reachable at ${new URL(databaseUrl).host}: start it with \`docker compose up -d postgres\` (or your local server).`);
  pnpm(['turbo', 'run', 'build', '--output-logs=errors-only']);
  const { startFleet } = createRequire(import.meta.url)(join(ROOT, 'packages', 'testing', 'dist', 'index.js'));

  const gatewayPort = Number(process.env.GATEWAY_PORT ?? '8080');
  if (!Number.isInteger(gatewayPort) || gatewayPort < 1 || gatewayPort > 65534)
    fail(`GATEWAY_PORT must be a port number below 65535 (got ${process.env.GATEWAY_PORT})`);
  const env = {};
  for (const name of FLEET_PASSED_VARIABLES) if (process.env[name] !== undefined) env[name] = process.env[name];

  let stopping = false;
  let running;
  // A closed terminal or pipe (Ctrl-C also stops a `| tee`) must not crash the launcher before it has stopped the fleet.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const stopAll = async (code) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nStopping the fleet...\n');
    await running?.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  process.stdout.write('Starting a Redis Cluster, PgBouncer and the fleet (about a minute)...\n');
  try {
    running = await startFleet({
      databaseUrl,
      gatewayPort,
      adminToken: process.env.PLATFORM_ADMIN_TOKEN,
      logLevel: process.env.LOG_LEVEL ?? 'info',
      env,
      // Lines go to the terminal; none kept beyond what a drill would need.
      logLinesKept: 1_000,
      onOutput: (name, line) => process.stdout.write(`${`[${name}]`.padEnd(14)} ${line}\n`),
      onExit: (name, exit) => {
        if (!stopping) process.stderr.write(`${name} exited (${exit.code ?? exit.signal}); the fleet runs on without it. Ctrl-C stops everything.\n`);
      },
    });
  } catch (err) {
    if (stopping) return;
    fail(`npm run fleet: ${err.message}`);
  }
  if (stopping) return void (await running.stop());

  const [gateway, ...otherGateways] = running.gatewayUrls;
  const processes = running.processes();
  const instancesOf = (kind) => processes.filter((p) => p.kind === kind);
  const masters = await running.redis.masters();
  const lines = [
    '',
    '──────────────────────────────────────────────────────────────',
    `Fleet running. Gateways: ${running.gatewayUrls.join(', ')}`,
    ...accessLines(gateway, running.adminToken, running.workspaceId, running.token),
    'Services, each behind a round-robin balancer that the gateways call:',
    ...SERVICES.map(
      (s) =>
        `  ${s.padEnd(10)} ${running.serviceUrls[s]} -> ${instancesOf(s)
          .map((p) => `${p.name} :${p.port}`)
          .join(', ')}`,
    ),
    `Run workers:    ${instancesOf('worker')
      .map((p) => p.name)
      .join(', ')}`,
    `Metrics:        ${processes.map((p) => `${p.name} :${new URL(p.metricsUrl).port}`).join(', ')} (GET /metrics)`,
    `redis cluster: ${running.seeds}`,
    `Redis masters:  ${masters.map((m) => `${m.host}:${m.port}`).join(', ')} (each with a replica)`,
    `PgBouncer:      ${running.pgBouncer.host}:${running.pgBouncer.port} (pool_mode = transaction) in front of ${new URL(databaseUrl).host}`,
    ...(await demoLines(gateway, running.token)),
    '',
    `The second gateway serves the same platform: replace ${gateway} with ${otherGateways.join(' or ')}.`,
    'Watch a failover: stop the master that serves slot 0, then ask another node who serves it now:',
    `  redis-cli -p ${masters[0].port} shutdown nosave`,
    `  redis-cli -p ${masters[1].port} cluster nodes`,
    '',
    'Ctrl-C stops every process.',
    '──────────────────────────────────────────────────────────────',
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A browser that starts: `--version` answers (a snap stub or a broken install does not). */
function browserRuns(path) {
  return spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 }).status === 0;
}

/** Playwright's downloaded Chromium builds, newest first (~/.cache/ms-playwright, or PLAYWRIGHT_BROWSERS_PATH). */
function playwrightBrowsers() {
  const caches = [
    process.env.PLAYWRIGHT_BROWSERS_PATH,
    join(homedir(), '.cache', 'ms-playwright'),
    join(homedir(), 'Library', 'Caches', 'ms-playwright'),
  ].filter(Boolean);
  const found = [];
  for (const cache of caches) {
    let builds = [];
    try {
      builds = readdirSync(cache).filter((name) => /^chromium(_headless_shell)?-\d+$/.test(name));
    } catch {
      continue;
    }
    builds.sort((a, b) => Number(b.split('-').at(-1)) - Number(a.split('-').at(-1)));
    for (const build of builds) {
      for (const binary of [
        'chrome-linux/chrome',
        'chrome-linux64/chrome',
        'chrome-linux/headless_shell',
        'chrome-headless-shell-linux64/chrome-headless-shell',
        'chrome-mac/Chromium.app/Contents/MacOS/Chromium',
      ]) {
        found.push(join(cache, build, binary));
      }
    }
  }
  return found;
}

/** Where a Chromium or Chrome may already be, in order: Debian's chromium, Chrome, Playwright's cache. */
function browserCandidates() {
  const onPath = (name) =>
    (process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, name));
  return [
    '/usr/bin/chromium',
    ...['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'].flatMap(onPath),
    '/opt/google/chrome/chrome',
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
    ...playwrightBrowsers(),
  ];
}

/** The command that installs Debian packages here without asking: apt-get as root, or through password-less sudo; else null. */
function aptInstaller() {
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return null;
  if (process.getuid?.() === 0) return [];
  return spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0 ? ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive'] : null;
}

/**
 * The browser the e2e suite drives (the one discovery; e2e receives it as CHROMIUM_PATH): CHROMIUM_PATH
 * when set, else one found (Debian's chromium, Chrome, Playwright's cache), else Debian's chromium
 * installed with apt-get where this user may (root or password-less sudo); otherwise stops in one line.
 */
function ensureBrowser() {
  const given = process.env.CHROMIUM_PATH;
  if (given) {
    if (!isExecutable(given) || !browserRuns(given))
      fail(`CHROMIUM_PATH=${given} is not a browser that runs: point it at Chromium or Chrome, or unset it to let npm test find or install one.`);
    return given;
  }
  const found = browserCandidates().find((path) => isExecutable(path) && browserRuns(path));
  if (found) return found;
  const sudo = aptInstaller();
  if (!sudo) {
    fail(
      "npm test needs Chromium for the e2e suite and found none (CHROMIUM_PATH, chromium, Google Chrome, Playwright's cache), and cannot install it here: run `apt-get install chromium fonts-liberation` as root, or set CHROMIUM_PATH.",
    );
  }
  process.stderr.write("No Chromium found for the e2e suite: installing Debian's chromium and fonts-liberation with apt-get...\n");
  const apt = (args) => {
    const [command, ...argv] = [...sudo, 'apt-get', ...args];
    const result = spawnSync(command, argv, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (result.status !== 0)
      fail(
        `npm test needs Chromium for the e2e suite and \`apt-get ${args.join(' ')}\` failed (exit ${result.status ?? result.signal}): install chromium yourself, or set CHROMIUM_PATH.`,
      );
  };
  apt(['update', '-qq']);
  // fonts-liberation: pages render text where recommended packages are off.
  apt(['install', '-y', '-qq', 'chromium', 'fonts-liberation']);
  const installed = browserCandidates().find((path) => isExecutable(path) && browserRuns(path));
  if (!installed)
    fail('npm test needs Chromium for the e2e suite: apt-get installed chromium, but no browser that runs was found after it; set CHROMIUM_PATH.');
  return installed;
}

/** Whether the turbo arguments run the e2e suite: every package unless filtered, or a filter naming it. */
function runsE2e(args) {
  const filters = args.flatMap((arg, i) =>
    arg.startsWith('--filter=') ? [arg.slice('--filter='.length)] : arg === '--filter' || arg === '-F' ? [args[i + 1] ?? ''] : [],
  );
  return filters.length === 0 || filters.some((filter) => filter.includes('e2e'));
}

/** Prints the e2e suite's browser (found or installed), for `cd e2e && npx jest` without CHROMIUM_PATH. */
async function browser() {
  process.stdout.write(`${ensureBrowser()}\n`);
}

/** Runs a turbo test task in every package, then prints one closing line that sums the jest results. */
async function runTests(task, args, env, concurrency) {
  const [command, ...prefix] = pnpmCommand();
  const child = spawn(command, [...prefix, 'turbo', 'run', task, `--concurrency=${concurrency}`, ...args], {
    cwd: ROOT,
    env: { ...env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let passed = 0;
  let failed = 0;
  let suitesFailed = 0;
  const pending = new Map();
  const count = (chunk, out) => {
    out.write(chunk);
    // Whole lines only: a chunk may end mid-line.
    const lines = ((pending.get(out) ?? '') + chunk).split('\n');
    pending.set(out, lines.pop());
    for (const line of lines) {
      const tests = /Tests:\s+(.*)$/.exec(line);
      if (tests) {
        passed += Number(/(\d+) passed/.exec(tests[1])?.[1] ?? 0);
        failed += Number(/(\d+) failed/.exec(tests[1])?.[1] ?? 0);
      }
      const suites = /Test Suites:\s+(\d+) failed/.exec(line);
      if (suites) suitesFailed += Number(suites[1]);
    }
  };
  child.stdout.setEncoding('utf8').on('data', (c) => count(c, process.stdout));
  child.stderr.setEncoding('utf8').on('data', (c) => count(c, process.stderr));
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  if (suitesFailed > 0 && failed === 0) failed = suitesFailed;
  if (code !== 0 && failed === 0) failed = 1;
  process.stdout.write(`\ntests: ${passed} passed, ${failed} failed\n`);
  process.exit(code === 0 && failed === 0 ? 0 : 1);
}

/** Runs every package's tests (unit and integration), then prints one closing line that sums them. */
async function test() {
  const args = process.argv.slice(3);
  // Before anything runs: a missing browser stops here in one line, not as 8 failed e2e tests.
  const chromium = runsE2e(args) ? ensureBrowser() : undefined;
  ensureDependencies();
  await ensureBackends(platformEnv());
  // One package at a time: the integration suites share the servers' databases and ports.
  await runTests('test', args, { ...process.env, ...(chromium ? { CHROMIUM_PATH: chromium } : {}) }, 1);
}

/** Runs the unit tests alone (jest project `unit`, `*.test.ts`): no PostgreSQL, Redis or browser needed. */
async function unitTests() {
  ensureDependencies();
  await runTests('test:unit', process.argv.slice(3), process.env, 4);
}

/** The benchmarks (bench/): builds, then runs them on a platform of their own; never part of `npm test`. */
async function bench() {
  ensureDependencies();
  const env = platformEnv();
  if (!(await reachable(env.GATEWAY_DATABASE_URL, 5432))) {
    fail(`PostgreSQL is not reachable at ${new URL(env.GATEWAY_DATABASE_URL).host}: start it with \`docker compose up -d postgres\` (or your local server).`);
  }
  // The bench starts a throwaway redis-server of its own, so the machine's Redis is never loaded.
  if (spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status !== 0)
    fail('the bench needs the redis-server binary on PATH (apt-get install redis-server).');
  pnpm(['turbo', 'run', 'build', '--output-logs=errors-only']);
  pnpm(['--filter', '@platform/bench', 'run', 'bench', ...process.argv.slice(3)]);
}

/**
 * Makes the demo ticket and pipeline on the running platform at PLATFORM_URL with the key in
 * PLATFORM_API_KEY and prints the curl lines `npm start` prints for them: the e2e suite pastes
 * them into a shell, as a newcomer would.
 */
async function demoLinesCommand() {
  const gateway = process.env.PLATFORM_URL;
  const token = process.env.PLATFORM_API_KEY;
  if (!gateway || !token) fail('demo-lines needs PLATFORM_URL (the gateway) and PLATFORM_API_KEY (a key of a workspace).');
  process.stdout.write(`${(await demoLines(gateway.replace(/\/+$/, ''), token)).join('\n')}\n`);
}

const commands = { start, fleet, test, 'test:unit': unitTests, bench, browser, 'demo-lines': demoLinesCommand };
const command = commands[process.argv[2]];
if (!command) fail(`usage: node scripts/platform.mjs ${Object.keys(commands).join('|')}`);
ensureNodeRuntime();
await command();
