import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  DEPLOYABLES,
  IMAGES,
  ROOT,
  containerHostProblems,
  databaseVariables,
  effectivePort,
  entryProblems,
  metricsPortOrProblem,
  environmentProblems,
  FILE_VARIABLE_SUFFIX,
  redisTopologyProblems,
  imageBuildArgs,
  shutdownSeconds,
} from './deployables';
import { DOCKERFILE, imageEnvironment } from './dockerfile';

export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; args?: Record<string, string | number | null> | string[] };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: Array<string | number | { target?: number | string; published?: number | string; host_ip?: string }>;
  expose?: Array<string | number>;
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[] };
  stop_grace_period?: string;
  volumes?: Array<string | { source?: string; target?: string }>;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
}

export function readCompose(): ComposeFile {
  return parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
}

/** Compose interpolation with an empty shell environment: `${X:-default}` and `${X-default}` give the default. */
export function interpolate(value: string): string {
  return value
    .replace(/\$\$/g, '\u0000')
    .replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_, _name: string, fallback?: string) => fallback ?? '')
    .replace(/\$(\w+)/g, '')
    .replace(/\u0000/g, '$');
}

/** `${X}` without a default: `docker compose up` would need the variable set. */
function interpolationsWithoutDefault(value: unknown, path: string): string[] {
  if (typeof value === 'string') {
    return [...value.replace(/\$\$/g, '').matchAll(/\$\{(\w+)(:?[-?+][^}]*)?\}|\$(\w+)/g)]
      .filter((m) => !m[2]?.replace(/^:/, '').startsWith('-'))
      .map((m) => `${path}: ${m[0]} has no default (write \${${m[1] ?? m[3]}:-value})`);
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => interpolationsWithoutDefault(v, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => interpolationsWithoutDefault(v, `${path}.${k}`));
  return [];
}

/** A compose mapping in either form (`{ A: 1 }` or `["A=1"]`), interpolated; a null value is left out. */
function mappingOf(value: Record<string, string | number | boolean | null> | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const entries = Array.isArray(value) ? value.map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string?]) : Object.entries(value ?? {});
  for (const [name, item] of entries) {
    if (item !== undefined && item !== null) out[name] = interpolate(String(item));
  }
  return out;
}

export function environmentOf(service: ComposeService): Record<string, string> {
  return mappingOf(service.environment);
}

function dependsOn(service: ComposeService): Record<string, string> {
  if (Array.isArray(service.depends_on)) return Object.fromEntries(service.depends_on.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(service.depends_on ?? {}).map(([name, value]) => [name, value?.condition ?? 'service_started']));
}

function commandOf(service: ComposeService): string[] | undefined {
  if (service.command === undefined) return undefined;
  return Array.isArray(service.command) ? service.command : service.command.split(/\s+/);
}

/** Container ports a service publishes, as {hostIp, published, target}; no hostIp: every interface of the host. */
function publishedPorts(service: ComposeService): Array<{ hostIp?: string; published?: number; target: number }> {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') {
      return { hostIp: port.host_ip, published: port.published === undefined ? undefined : Number(port.published), target: Number(port.target) };
    }
    let text = interpolate(String(port)).replace(/\/(tcp|udp)$/, '');
    let hostIp: string | undefined;
    const bracketed = /^\[([^\]]+)\]:(.*)$/.exec(text);
    if (bracketed) [, hostIp, text] = bracketed as unknown as [string, string, string];
    const parts = text.split(':');
    if (parts.length === 3) hostIp = parts.shift();
    const target = Number(parts.at(-1));
    return parts.length > 1 ? { hostIp, published: Number(parts.at(-2)), target } : { hostIp, target };
  });
}

const LOOPBACK_IPS = ['127.0.0.1', '::1'];

export function durationSeconds(value: string): number {
  let seconds = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    seconds += Number(amount) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[unit as string]!;
  }
  return seconds;
}

const BACKING: Record<string, number> = { postgres: 5432, redis: 6379 };

/** Variables that hold a credential: never written in this file, neither as a value nor as a default. */
const CREDENTIAL = /(SECRET|TOKEN|PASSWORD)$/;

/** Where a service's volumes are mounted in its container. */
function volumeTargets(service: ComposeService): string[] {
  return (service.volumes ?? []).map((volume) => (typeof volume === 'string' ? (volume.split(':')[1] ?? volume) : (volume.target ?? '')));
}

/**
 * Safe defaults (issue 29): nothing is published beyond this machine (127.0.0.1) unless a user
 * chooses so, and no credential is written in the file: each comes from the shell or from a file
 * that a `*_FILE` variable names, inside a volume the service mounts.
 */
function safeDefaultProblems(services: Record<string, ComposeService>): string[] {
  const problems: string[] = [];
  for (const [name, service] of Object.entries(services)) {
    for (const p of publishedPorts(service)) {
      if (!LOOPBACK_IPS.includes(p.hostIp ?? ''))
        problems.push(`${name}: publishes ${p.published ?? p.target} on ${p.hostIp ?? 'every interface'} of the host; publish it on 127.0.0.1 only`);
    }
    const raw: Record<string, unknown> = Array.isArray(service.environment)
      ? Object.fromEntries(service.environment.map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]))
      : (service.environment ?? {});
    for (const [variable, value] of Object.entries(raw)) {
      if (CREDENTIAL.test(variable) && typeof value === 'string' && interpolate(value) !== '')
        problems.push(
          `${name}: ${variable} is written in docker-compose.yml; make it on first start (a *_FILE variable) or take it from the shell without a default`,
        );
      if (variable.endsWith(FILE_VARIABLE_SUFFIX) && typeof value === 'string') {
        const path = interpolate(value);
        if (!volumeTargets(service).some((target) => target && path.startsWith(`${target}/`)))
          problems.push(`${name}: ${variable} is ${path}, which is in no volume it mounts`);
      }
    }
  }
  return problems;
}

/** Everything docker-compose.yml must hold for the deployables, as a list of problems (empty: none). */
export function composeProblems(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const services = compose.services ?? {};
  const portOf = (name: string): number | undefined => {
    const d = DEPLOYABLES.find((x) => x.name === name);
    const service = services[name];
    return d && service ? effectivePort(d, environmentOf(service)) : BACKING[name];
  };

  problems.push(...interpolationsWithoutDefault(services, 'services'));
  problems.push(...safeDefaultProblems(services));

  // `docker compose up -d postgres redis` for `npm start`: both published on their usual ports, with healthchecks.
  for (const [name, port] of Object.entries(BACKING)) {
    const service = services[name];
    if (!service) {
      problems.push(`${name}: missing`);
      continue;
    }
    if (!service.healthcheck?.test) problems.push(`${name}: no healthcheck (the others wait on service_healthy)`);
    if (!publishedPorts(service).some((p) => p.published === port && p.target === port)) problems.push(`${name}: does not publish ${port} for \`npm start\``);
    if (Object.keys(dependsOn(service)).length > 0)
      problems.push(`${name}: depends on other services, so \`docker compose up -d postgres redis\` would start them`);
  }

  const sameImage = (name: string, service: ComposeService, dir: string, image: string) => {
    const build = typeof service.build === 'string' ? { context: service.build } : service.build;
    if (!build) return [`${name}: no build`];
    const out: string[] = [];
    const context = build.context ?? '.';
    const dockerfile = build.dockerfile ?? 'Dockerfile';
    if (context !== '.' && context !== './') out.push(`${name}: build context ${context}: the Dockerfile builds from the repository root`);
    if (dockerfile !== DOCKERFILE) out.push(`${name}: builds ${dockerfile}, expected ${DOCKERFILE} (the one Dockerfile of every image)`);
    if (!existsSync(join(ROOT, context, dockerfile))) out.push(`${name}: ${join(context, dockerfile)} does not exist`);
    const args = mappingOf(build.args);
    for (const [arg, expected] of Object.entries(imageBuildArgs(dir))) {
      if (args[arg] !== expected) out.push(`${name}: build argument ${arg} is ${args[arg] ?? 'unset'}, expected ${expected}`);
    }
    if (service.image?.split(':')[0] !== image) out.push(`${name}: image ${service.image ?? '(none)'}, expected ${image}:<tag>`);
    return out;
  };

  for (const d of DEPLOYABLES) {
    const service = services[d.name];
    if (!service) {
      problems.push(`${d.name}: missing`);
      continue;
    }
    const env = environmentOf(service);
    const port = effectivePort(d, env);
    problems.push(...sameImage(d.name, service, d.dir, d.image));
    problems.push(...environmentProblems(d.name, env, d.schema, { complete: true }));
    problems.push(...redisTopologyProblems(d.name, env, d.schema));
    problems.push(...containerHostProblems(d.name, d, env, imageEnvironment(d.dir)));

    const command = commandOf(service);
    if (command ? command.join(' ') !== `node --enable-source-maps ${d.entry}` : d.entry !== 'dist/main.js') {
      problems.push(`${d.name}: command ${JSON.stringify(command ?? 'the image CMD (dist/main.js)')}, expected node --enable-source-maps ${d.entry}`);
    }
    if (command?.[2]) problems.push(...entryProblems(d.name, d.dir, command[2]));

    for (const p of publishedPorts(service)) {
      if (p.target !== port) problems.push(`${d.name}: publishes container port ${p.target}, but it listens on ${port} (${d.portVariable})`);
    }
    // GET /metrics on its own port (contract section 12), exposed on the compose network for a Prometheus there.
    const metricsPort = metricsPortOrProblem(d.name, d, env);
    if (typeof metricsPort === 'string') problems.push(metricsPort);
    else if (metricsPort === port) problems.push(`${d.name}: serves /metrics on its API port ${port}; ${d.metricsPortVariable} must differ`);
    else if (!(service.expose ?? []).some((exposed) => Number(exposed) === metricsPort)) {
      problems.push(`${d.name}: does not expose its metrics port ${metricsPort} (${d.metricsPortVariable})`);
    }
    for (const exposed of service.expose ?? []) {
      if (Number(exposed) !== port && Number(exposed) !== metricsPort) {
        problems.push(
          `${d.name}: exposes ${exposed}, but it listens on ${port} (${d.portVariable}) and serves metrics on ${String(metricsPort)} (${d.metricsPortVariable})`,
        );
      }
    }
    if (service.healthcheck?.test) {
      const test = [service.healthcheck.test].flat().join(' ');
      if (!test.includes(`:${port}/healthz`) && !test.includes(d.portVariable)) problems.push(`${d.name}: healthcheck does not GET /healthz on ${port}`);
    } else if (d.entry !== 'dist/main.js') {
      problems.push(`${d.name}: no healthcheck, and the image's HEALTHCHECK checks the API port, not ${d.portVariable} ${port}`);
    }
    const grace = durationSeconds(service.stop_grace_period ?? '10s');
    if (grace <= shutdownSeconds(d, env))
      problems.push(`${d.name}: stop_grace_period ${grace}s does not exceed its ${shutdownSeconds(d, env)}s shutdown deadline`);

    const deps = dependsOn(service);
    const migration = `migrate-${IMAGES.find((i) => i.dir === d.dir)?.name}`;
    if (databaseVariables(d.schema).length > 0 && deps[migration] !== 'service_completed_successfully') {
      problems.push(`${d.name}: does not depend on ${migration} with condition service_completed_successfully`);
    }
    if ('REDIS_URL' in d.schema.shape && deps.redis !== 'service_healthy') problems.push(`${d.name}: uses Redis but does not wait for redis (service_healthy)`);
  }

  for (const m of IMAGES) {
    const name = `migrate-${m.name}`;
    const service = services[name];
    if (!service) {
      problems.push(`${name}: missing (one-shot migration of ${m.dir})`);
      continue;
    }
    problems.push(...sameImage(name, service, m.dir, m.image));
    const command = commandOf(service);
    if (command?.join(' ') !== 'node dist/migrate.js') problems.push(`${name}: command ${JSON.stringify(command)}, expected ["node", "dist/migrate.js"]`);
    else problems.push(...entryProblems(name, m.dir, 'dist/migrate.js'));
    const env = environmentOf(service);
    problems.push(...environmentProblems(name, env, m.schema, { complete: false }));
    for (const variable of databaseVariables(m.schema)) {
      if (!env[variable]) problems.push(`${name}: ${variable} is not set`);
    }
    if (dependsOn(service).postgres !== 'service_healthy') problems.push(`${name}: does not wait for postgres (service_healthy)`);
  }

  for (const [name, service] of Object.entries(services)) {
    for (const target of Object.keys(dependsOn(service))) {
      if (!services[target]) problems.push(`${name}: depends on ${target}, which is not a service`);
    }
    // Inside a container 127.0.0.1 is the container itself: addresses are service names, on their ports.
    for (const [variable, value] of Object.entries(environmentOf(service))) {
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) continue;
      const url = new URL(value);
      const defaultPort = { 'http:': 80, 'https:': 443, 'postgresql:': 5432, 'postgres:': 5432, 'redis:': 6379 }[url.protocol];
      const port = Number(url.port || defaultPort);
      if (!services[url.hostname]) {
        problems.push(`${name}: ${variable} points at ${url.hostname}, which is not a compose service`);
      } else if (portOf(url.hostname) !== port) {
        problems.push(`${name}: ${variable} uses port ${port}, but ${url.hostname} listens on ${portOf(url.hostname)}`);
      }
    }
  }

  const gateway = services.gateway;
  if (gateway && !publishedPorts(gateway).some((p) => p.published === 8080))
    problems.push('gateway: not published on 8080 (the platform address, contract section 1)');
  return problems;
}
