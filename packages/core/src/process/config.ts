import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { DatabaseConfig } from '../data/database';
import { MAX_QUOTA_VALUE } from '../data/quotas';
import { RedisConfig, redisTopologyProblem } from '../redis/redis-config';
import { TracingConfig } from '../observability/tracing-config';

/** Thrown by parseConfig; its message is the one line that names the bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * `NAME_FILE` for any variable NAME the schema reads (the Docker and Kubernetes secrets
 * convention): when NAME is unset or empty, the file's content, without its final newline, is
 * NAME's value. So a secret can come from a mounted file and never sit in the environment.
 */
export function withFileVariables(schema: z.ZodObject, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const resolved: NodeJS.ProcessEnv = { ...env };
  for (const name of Object.keys(schema.shape)) {
    const path = env[`${name}_FILE`];
    if (!path || (env[name] !== undefined && env[name] !== '')) continue;
    try {
      resolved[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ConfigError(`invalid configuration: ${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return resolved;
}

/** Parses environment variables with a zod object schema (NAME_FILE read for NAME); the error names every bad variable. */
export function parseConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(withFileVariables(schema, env));
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  // A mix of Redis topologies is refused wherever CommonConfig's Redis variables are read.
  const redisProblem = 'REDIS_URL' in schema.shape ? redisTopologyProblem(result.data) : undefined;
  if (redisProblem) throw new ConfigError(`invalid configuration: ${redisProblem}`);
  return result.data;
}

/** parseConfig for a process entry point: a bad variable stops the process with one line. */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Where a process listens unless HOST says otherwise: this machine only (contract section 4). */
export const DEFAULT_HOST = '127.0.0.1';

/** Common variable shapes. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: (fallback?: string) => (fallback === undefined ? z.string().url() : z.string().url().default(fallback)),
  secret: () => z.string().min(16, 'must be at least 16 characters'),
  boolean: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * A limit of what a workspace keeps (a quota's platform default, a platform limit such as core's
   * DEFAULT_WORKSPACE_LIMITS): digits only, from 0 to `max` (default MAX_QUOTA_VALUE, a Postgres
   * integer); unset: `fallback`. An empty value is refused, not read as 0 (which would refuse every create).
   */
  limit: (fallback: number, max: number = MAX_QUOTA_VALUE) =>
    z
      .string()
      .regex(/^\d{1,16}$/, 'must be a whole number (0 or more)')
      .transform(Number)
      .pipe(z.number().max(max))
      .default(fallback),
  /**
   * HOST, the address every server of a process listens on (its API port and its metrics port).
   * An IP address only: a name (a shell's HOST is often the machine's name) would bind to whatever
   * it resolves to, which may be a public interface. Containers set 0.0.0.0.
   */
  host: () =>
    z
      .string()
      .refine((value) => isIP(value) !== 0, 'must be an IP address to listen on, such as 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)')
      .default(DEFAULT_HOST),
};

/**
 * The variables every process of the platform (the gateway, each service, the run worker) reads
 * under the same names: where it listens, Redis, its log level, its database timeouts and its
 * tracing (the OpenTelemetry variables; startTracing reads them before the rest is loaded).
 */
export const CommonConfig = z.object({
  /** The address every port of this process listens on: 127.0.0.1 (this machine only) unless set; containers set 0.0.0.0. */
  HOST: env.host(),
  /** One Redis topology (REDIS_URL, REDIS_CLUSTER_NODES, or REDIS_SENTINELS + REDIS_SENTINEL_MASTER); `redisTarget` reads it. */
  ...RedisConfig.shape,
  LOG_LEVEL: env.logLevel(),
  ...DatabaseConfig.shape,
  ...TracingConfig.shape,
});
