import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventsConfig } from '@platform/events/dist/config.js';
import { GatewayConfig } from '@platform/gateway/dist/config.js';
import { PipelinesConfig } from '@platform/pipelines/dist/config.js';
import { WorkerConfig } from '@platform/pipelines/dist/worker.config.js';
import { WarehouseConfig } from '@platform/warehouse/dist/config.js';

/** The repository root (infra/src/..). */
export const ROOT = join(__dirname, '..', '..');

interface Parsed {
  success: boolean;
  data?: unknown;
  error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> };
}

/** What the tests need of a deployable's zod config schema (src/config.ts), without depending on zod. */
export interface ConfigSchema {
  shape: Record<string, { safeParse(value: unknown): Parsed }>;
  safeParse(value: unknown): Parsed;
}

/** One process that is deployed on its own: a compose service and a Kubernetes Deployment of that name. */
export interface Deployable {
  name: string;
  /** The workspace package, relative to the repository root. */
  dir: string;
  packageName: string;
  /** The image it runs, built by the Dockerfile for its package (the worker shares the pipelines image). */
  image: string;
  /** The zod schema of the process's environment, imported from the package's build. */
  schema: ConfigSchema;
  /** The variable of the port that answers /healthz and /readyz. */
  portVariable: string;
  /** The variable of the port that answers GET /metrics (Prometheus), never the API's port. */
  metricsPortVariable: string;
  /** The script the process runs; the image's CMD when `command` is not set. */
  entry: string;
}

const schema = (value: unknown): ConfigSchema => value as ConfigSchema;

export const DEPLOYABLES: readonly Deployable[] = [
  {
    name: 'gateway',
    dir: 'gateway',
    packageName: '@platform/gateway',
    image: 'platform/gateway',
    schema: schema(GatewayConfig),
    portVariable: 'GATEWAY_PORT',
    metricsPortVariable: 'METRICS_PORT',
    entry: 'dist/main.js',
  },
  {
    name: 'events',
    dir: 'services/events',
    packageName: '@platform/events',
    image: 'platform/events',
    schema: schema(EventsConfig),
    portVariable: 'EVENTS_PORT',
    metricsPortVariable: 'METRICS_PORT',
    entry: 'dist/main.js',
  },
  {
    name: 'warehouse',
    dir: 'services/warehouse',
    packageName: '@platform/warehouse',
    image: 'platform/warehouse',
    schema: schema(WarehouseConfig),
    portVariable: 'WAREHOUSE_PORT',
    metricsPortVariable: 'METRICS_PORT',
    entry: 'dist/main.js',
  },
  {
    name: 'pipelines',
    dir: 'services/pipelines',
    packageName: '@platform/pipelines',
    image: 'platform/pipelines',
    schema: schema(PipelinesConfig),
    portVariable: 'PIPELINES_PORT',
    metricsPortVariable: 'METRICS_PORT',
    entry: 'dist/main.js',
  },
  // The run worker has its own schema (services/pipelines/src/worker.config.ts) and health port.
  {
    name: 'pipelines-worker',
    dir: 'services/pipelines',
    packageName: '@platform/pipelines',
    image: 'platform/pipelines',
    schema: schema(WorkerConfig),
    portVariable: 'PIPELINES_WORKER_PORT',
    metricsPortVariable: 'METRICS_PORT',
    entry: 'dist/worker.js',
  },
];

/** A package with its own database: one image, one migration (`node dist/migrate.js`). */
export interface Migratable {
  /** Compose service `migrate-<name>`, Kubernetes Job `<name>-migrate`. */
  name: string;
  dir: string;
  image: string;
  /** The schema src/migrate.ts reads its database URL from. */
  schema: ConfigSchema;
}

/** The packages that ship an image: the deployables' packages, once each. */
export const IMAGES: readonly Migratable[] = DEPLOYABLES.filter((d) => d.entry === 'dist/main.js').map((d) => ({
  name: d.name,
  dir: d.dir,
  image: d.image,
  schema: d.schema,
}));

/**
 * The build arguments of a package's image (the root Dockerfile builds every image with them): the
 * package, the port variable its HEALTHCHECK asks and that port's default, and every port of the
 * processes the image runs (API and metrics; for pipelines the run worker's too), for EXPOSE.
 */
export function imageBuildArgs(dir: string): Record<string, string> {
  const processes = DEPLOYABLES.filter((d) => d.dir === dir);
  const api = processes.find((d) => d.entry === 'dist/main.js');
  if (!api) throw new Error(`no image is built for ${dir}`);
  return {
    PACKAGE: api.packageName,
    PORT_VARIABLE: api.portVariable,
    PORT: String(effectivePort(api)),
    PORTS: processes.flatMap((d) => [effectivePort(d), effectiveMetricsPort(d)]).join(' '),
  };
}

export function deployable(name: string): Deployable {
  const found = DEPLOYABLES.find((d) => d.name === name);
  if (!found) throw new Error(`no deployable ${name}`);
  return found;
}

/** The variables a schema accepts. */
export function variables(schema: ConfigSchema): string[] {
  return Object.keys(schema.shape);
}

/** The variables without a default: a process without one of them refuses to start. */
export function requiredVariables(schema: ConfigSchema): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => !field.safeParse(undefined).success)
    .map(([name]) => name);
}

/** The variable's value when unset (its schema default). */
export function defaultOf(schema: ConfigSchema, name: string): unknown {
  const field = schema.shape[name];
  if (!field) throw new Error(`${name} is not a variable of this schema`);
  return field.safeParse(undefined).data;
}

/** The port a process listens on with this environment (the variable, else its default). */
export function effectivePort(d: Deployable, env: Record<string, string | undefined> = {}): number {
  const parsed = d.schema.shape[d.portVariable]?.safeParse(env[d.portVariable]);
  if (!parsed?.success || typeof parsed.data !== 'number') throw new Error(`${d.name}: ${d.portVariable} is not a port`);
  return parsed.data;
}

/**
 * The port a process serves GET /metrics on with this environment. Throws when the schema has no
 * such variable: every deployable must have a metrics port (contract section 12).
 */
export function effectiveMetricsPort(d: Deployable, env: Record<string, string | undefined> = {}): number {
  const field = d.schema.shape[d.metricsPortVariable];
  if (!field) throw new Error(`${d.name}: ${d.metricsPortVariable} is not a variable of its config schema`);
  const parsed = field.safeParse(env[d.metricsPortVariable]);
  if (!parsed.success || typeof parsed.data !== 'number') throw new Error(`${d.name}: ${d.metricsPortVariable} is not a port`);
  return parsed.data;
}

/** The metrics port, or the problem that there is none. */
export function metricsPortOrProblem(where: string, d: Deployable, env: Record<string, string | undefined> = {}): number | string {
  try {
    return effectiveMetricsPort(d, env);
  } catch (err) {
    return `${where}: ${(err as Error).message.replace(`${d.name}: `, '')}`;
  }
}

/** The database URL variables of a schema (`*_DATABASE_URL`; not `*_DIRECT_DATABASE_URL`, optional, whose default is the former). */
export function databaseVariables(schema: ConfigSchema): string[] {
  return variables(schema).filter((name) => name.endsWith('_DATABASE_URL') && !name.endsWith('_DIRECT_DATABASE_URL'));
}

/** `GATEWAY_DATABASE_URL` -> `GATEWAY_DIRECT_DATABASE_URL`. */
export function directDatabaseVariable(variable: string): string {
  return variable.replace(/_DATABASE_URL$/, '_DIRECT_DATABASE_URL');
}

/**
 * Redis, one topology per process (contract section 17): its variables, all of which must be set,
 * and none of another's. REDIS_USERNAME and REDIS_PASSWORD apply to every topology.
 */
export const REDIS_TOPOLOGIES: Readonly<Record<string, readonly string[]>> = {
  standalone: ['REDIS_URL'],
  cluster: ['REDIS_CLUSTER_NODES'],
  sentinel: ['REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER'],
};

/** The topologies an environment sets any variable of. */
export function redisTopologiesOf(env: Record<string, string | undefined>): string[] {
  return Object.entries(REDIS_TOPOLOGIES)
    .filter(([, names]) => names.some((name) => env[name] !== undefined))
    .map(([topology]) => topology);
}

/** Exactly one Redis topology, complete, for a process that uses Redis (its schema has REDIS_URL). */
export function redisTopologyProblems(where: string, env: Record<string, string | undefined>, schema: ConfigSchema): string[] {
  if (!('REDIS_URL' in schema.shape)) return [];
  const topologies = redisTopologiesOf(env);
  if (topologies.length !== 1) {
    return [
      `${where}: sets the Redis variables of ${topologies.length === 0 ? 'no topology' : topologies.join(' and ')}, expected exactly one (REDIS_URL, REDIS_CLUSTER_NODES, or REDIS_SENTINELS with REDIS_SENTINEL_MASTER)`,
    ];
  }
  const missing = (REDIS_TOPOLOGIES[topologies[0] ?? ''] ?? []).filter((name) => env[name] === undefined);
  return missing.map((name) => `${where}: Redis ${topologies[0]} without ${name}`);
}

/**
 * Problems of an environment for a schema: names the schema does not know (a typo is silently ignored
 * by zod, and the default wins), required names missing, values the schema rejects.
 */
/** The suffix that reads a variable from a file (core parseConfig: NAME_FILE, the secrets-as-files convention). */
export const FILE_VARIABLE_SUFFIX = '_FILE';

export function environmentProblems(where: string, env: Record<string, string | undefined>, schema: ConfigSchema, options: { complete: boolean }): string[] {
  const known = new Set(variables(schema));
  const fromFile = (name: string): boolean => !env[name] && Boolean(env[`${name}${FILE_VARIABLE_SUFFIX}`]);
  const problems = Object.keys(env)
    .filter((name) => !known.has(name) && !(name.endsWith(FILE_VARIABLE_SUFFIX) && known.has(name.slice(0, -FILE_VARIABLE_SUFFIX.length))))
    .map((name) => `${where}: ${name} is not a variable of its config schema`);
  if (!options.complete) return problems;
  for (const name of requiredVariables(schema)) {
    if (env[name] === undefined && !fromFile(name)) problems.push(`${where}: required variable ${name} is not set`);
  }
  // The defaults are for a laptop: inside a container 127.0.0.1 is the container itself. REDIS_URL's
  // default does not apply where another Redis topology is chosen.
  const otherRedis = redisTopologiesOf(env).some((topology) => topology !== 'standalone');
  for (const name of variables(schema)) {
    if (otherRedis && name === 'REDIS_URL') continue;
    const fallback = defaultOf(schema, name);
    if (env[name] === undefined && typeof fallback === 'string' && /^[a-z][a-z0-9+.-]*:\/\/([^@/]*@)?(127\.0\.0\.1|localhost|\[::1\])[:/]/i.test(fallback)) {
      problems.push(`${where}: ${name} is not set, and its default ${fallback} is loopback`);
    }
  }
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error?.issues ?? []) {
      const name = issue.path.map(String).join('.');
      // A value read from a file at start-up is not known here.
      if (env[name] !== undefined && !fromFile(name)) problems.push(`${where}: ${name} is invalid: ${issue.message}`);
    }
  }
  return problems;
}

/** HOST values that listen on every interface: what a container needs (contract section 4). */
export const EVERY_INTERFACE: readonly string[] = ['0.0.0.0', '::'];

/**
 * HOST in a deployable's container: its own environment, else its image's ENV, else the schema's
 * default (127.0.0.1, the container itself). It must be every interface, or probes, other
 * containers and published ports reach nothing.
 */
export function containerHostProblems(where: string, d: Deployable, env: Record<string, string | undefined>, imageEnv: Record<string, string>): string[] {
  const field = d.schema.shape.HOST;
  if (!field) return [`${where}: HOST is not a variable of its config schema (every process listens on HOST, contract section 4)`];
  const value = env.HOST ?? imageEnv.HOST;
  const parsed = field.safeParse(value);
  if (!parsed.success) return [];
  const host = String(parsed.data);
  if (EVERY_INTERFACE.includes(host)) return [];
  const from = env.HOST !== undefined ? 'set' : imageEnv.HOST !== undefined ? 'from its image' : 'its default';
  return [`${where}: listens on HOST ${host} (${from}) inside its container, where nothing outside the container reaches it; HOST must be 0.0.0.0`];
}

/** `dist/x.js` is compiled from `src/x.ts`: the source a command runs must exist in its package. */
export function entryProblems(where: string, dir: string, entry: string): string[] {
  const match = /^dist\/(.+)\.js$/.exec(entry);
  if (!match) return [`${where}: ${entry} is not a dist/*.js script`];
  const source = join(dir, 'src', `${match[1]}.ts`);
  return existsSync(join(ROOT, source)) ? [] : [`${where}: runs ${entry} but ${source} does not exist`];
}

/** The shutdown deadline of every process using gracefulShutdown's default (packages/core/src/process/shutdown.ts), in seconds. */
export function defaultShutdownDeadlineSeconds(): number {
  const source = readFileSync(join(ROOT, 'packages/core/src/process/shutdown.ts'), 'utf8');
  const match = /deadlineMs = ([\d_]+)/.exec(source);
  if (!match?.[1]) throw new Error('gracefulShutdown has no default deadlineMs in packages/core/src/process/shutdown.ts');
  return Number(match[1].replace(/_/g, '')) / 1000;
}

/** How long a deployable may take to stop after SIGTERM with this environment, in seconds. */
export function shutdownSeconds(d: Deployable, env: Record<string, string | undefined>): number {
  if ('WORKER_SHUTDOWN_TIMEOUT_MS' in d.schema.shape) {
    const parsed = d.schema.shape.WORKER_SHUTDOWN_TIMEOUT_MS?.safeParse(env.WORKER_SHUTDOWN_TIMEOUT_MS);
    return Number(parsed?.data) / 1000;
  }
  return defaultShutdownDeadlineSeconds();
}

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as T;
}
