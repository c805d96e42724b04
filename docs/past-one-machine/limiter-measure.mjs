// Measures what one slow Redis answer costs the gateway's limiter under each failover policy
// (docs/past-one-machine/limiter.md). Run from the gateway package after its build, Redis at
// REDIS_URL (default 127.0.0.1:6379):
//   cd gateway && npx tsc -p tsconfig.build.json && node ../docs/past-one-machine/limiter-measure.mjs [hot-path|wrapper]
// (no argument: the fault scenarios; hot-path: CPU per decision on a healthy Redis; wrapper: the
// limiter's own code over a stub Redis).
// The `before` policy (the limiter before contract 17's rules: every request from memory for 1 s
// after a failure) is measured when gateway/dist/old-limiter/ holds that build.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';

const gatewayDir = process.cwd();
const require = createRequire(path.join(gatewayDir, 'package.json'));
const { FailoverLimiter, RedisSlidingWindow } = require('./dist/rate-limiter.js');
const { createRedis, closeRedis } = require('./dist/redis.js');
const { startTcpProxy } = require('@platform/testing');
const old = existsSync(path.join(gatewayDir, 'dist/old-limiter/rate-limiter.js')) ? require('./dist/old-limiter/rate-limiter.js') : undefined;

/** Requests per second offered to the limiter (open loop). */
const RATE = Number(process.env.RATE ?? 2_000);
const KEYS = 50;
const LIMIT = 1e9;
const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

const scenarios = {
  'one command 250 ms late': { runMs: 3_000, inject: (relay) => relay.delay(250, { direction: 'request' }) },
  'event loop stalled 150 ms': {
    runMs: 3_000,
    inject: () => {
      const end = Date.now() + 150;
      while (Date.now() < end);
    },
  },
  'Redis silent 2 s': { runMs: 5_000, inject: (relay) => relay.delay(2_000, { direction: 'request' }) },
};

function recordingLogger(lines) {
  const record =
    (level) =>
    (...args) =>
      lines.push({ at: Date.now(), level, msg: String(args.find((a) => typeof a === 'string') ?? '') });
  const logger = { warn: record('warn'), info: record('info'), error: record('error'), debug() {}, child: () => logger };
  return logger;
}

function makeLimiter(policy, redis, logger, prefix) {
  if (policy === 'before') return new old.FailoverLimiter(redis, new old.RedisSlidingWindow(redis, prefix), new old.MemorySlidingWindow(), logger);
  return new FailoverLimiter(redis, new RedisSlidingWindow(redis, prefix), logger, { onFailure: policy });
}

async function run(policy, scenarioName) {
  const scenario = scenarios[scenarioName];
  const relay = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
  const lines = [];
  const logger = recordingLogger(lines);
  const redis = createRedis(`redis://127.0.0.1:${relay.port}`, logger, 'measure');
  await new Promise((resolve) => (redis.status === 'ready' ? resolve() : redis.once('ready', resolve)));
  const limiter = makeLimiter(policy, redis, logger, `measure:${process.pid}:${policy}:${Date.now()}:`);
  const latencies = [];
  const answers = [];
  const start = Date.now();
  let injectedAt = 0;
  let n = 0;
  // Open loop: requests arrive at RATE whatever the answers take, as at a gateway.
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const elapsed = Date.now() - start;
      if (elapsed >= scenario.runMs) return void (clearInterval(tick), resolve());
      const inject = !injectedAt && elapsed >= 1_000;
      if (inject) injectedAt = Date.now();
      for (let due = Math.floor((elapsed * RATE) / 1_000); n < due; n++) {
        const t0 = performance.now();
        const measured = injectedAt > 0;
        answers.push(limiter.hit(`k${n % KEYS}`, LIMIT).then(() => measured && latencies.push(performance.now() - t0)));
      }
      // After this tick's requests are sent: the fault meets calls in flight.
      if (inject) scenario.inject(relay);
    }, 5);
  });
  await Promise.all(answers);
  const end = Date.now();
  const state = limiter.state();
  limiter.close?.();
  await limiter.backgroundWork?.();
  await closeRedis(redis);
  await relay.close();
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))].toFixed(1);
  // Time deciding from memory: from each 'degraded' line to the 'restored' one after it.
  let memoryMs = 0;
  let since;
  for (const line of lines) {
    if (line.msg.includes('degraded') && since === undefined) since = line.at;
    if (line.msg.includes('restored') && since !== undefined) ((memoryMs += line.at - since), (since = undefined));
  }
  if (since !== undefined) memoryMs += end - since;
  return {
    policy,
    scenario: scenarioName,
    'requests after the fault': latencies.length,
    'decided from memory': state.memoryDecisions,
    'waited ≥ 100 ms': latencies.filter((l) => l >= 100).length,
    'p50 ms': pct(50),
    'p99 ms': pct(99),
    'max ms': latencies[latencies.length - 1].toFixed(0),
    'memory ms': memoryMs,
    'degraded lines': lines.filter((l) => l.msg.includes('degraded')).length,
    'failed calls': state.redisFailures,
  };
}

/** The healthy path: CPU per decision straight to Redis, no fault, 16 callers on 50 keys. */
async function hotPath(policy, hits) {
  const lines = [];
  const logger = recordingLogger(lines);
  const redis = createRedis(redisUrl.href, logger, 'measure');
  await new Promise((resolve) => (redis.status === 'ready' ? resolve() : redis.once('ready', resolve)));
  const limiter = makeLimiter(policy === 'before' ? 'before' : 'instance', redis, logger, `measure:${process.pid}:hot:${policy}:${Date.now()}:`);
  let n = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (n < hits) await limiter.hit(`k${n++ % KEYS}`, LIMIT);
    }),
  );
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - start;
  limiter.close?.();
  await closeRedis(redis);
  if (lines.some((l) => l.msg.includes('degraded'))) return undefined; // a timeout on the loaded machine: not the healthy path
  return { policy, 'µs CPU per hit': ((used.user + used.system) / n).toFixed(2), 'hits per s': Math.round((n * 1000) / wallMs) };
}

/** The limiter's own code on the healthy path: a stub Redis that answers at once, 16 calls at a time. */
async function wrapper(policy, hits) {
  const reply = [1, 1, 1.7e15, 1.7e15];
  const redis = { status: 'ready', defineCommand() {}, gatewaySlidingWindow: () => Promise.resolve(reply) };
  const limiter = makeLimiter(policy === 'before' ? 'before' : 'instance', redis, recordingLogger([]), 'p:');
  const cpu = process.cpuUsage();
  for (let i = 0; i < hits; i += 16) await Promise.all(Array.from({ length: 16 }, (_, j) => limiter.hit(`k${(i + j) % KEYS}`, LIMIT)));
  const used = process.cpuUsage(cpu);
  limiter.close?.();
  return { policy, 'ns CPU per hit': Math.round(((used.user + used.system) * 1000) / hits) };
}

if (process.argv[2] === 'wrapper') {
  const rows = [];
  for (let rep = 0; rep < Number(process.env.REPEAT ?? 10); rep++)
    for (const policy of rep % 2 ? ['after', ...(old ? ['before'] : [])] : [...(old ? ['before'] : []), 'after']) rows.push(await wrapper(policy, 200_000));
  console.table(rows);
} else if (process.argv[2] === 'hot-path') {
  const rows = [];
  for (let rep = 0; rep < Number(process.env.REPEAT ?? 5); rep++)
    // Alternating which goes first, so an order effect (GC, Redis's memory) falls on both.
    for (const policy of rep % 2 ? ['after', ...(old ? ['before'] : [])] : [...(old ? ['before'] : []), 'after']) {
      const row = await hotPath(policy, 40_000);
      if (row) rows.push(row);
    }
  console.table(rows);
} else {
  const policies = [...(old ? ['before'] : []), 'instance', 'request'];
  const rows = [];
  for (let rep = 0; rep < Number(process.env.REPEAT ?? 2); rep++)
    for (const scenario of Object.keys(scenarios)) for (const policy of policies) rows.push(await run(policy, scenario));
  console.table(rows);
}
