import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEPLOYABLES, IMAGES, ROOT, effectiveMetricsPort, effectivePort, requiredVariables, variables } from './deployables';
import { type ComposeFile, composeProblems, durationSeconds, environmentOf, interpolate, readCompose } from './compose';
import { imageEnvironment } from './dockerfile';

/** A deep copy without the YAML anchors' shared objects, so a mutation touches one service. */
const copy = (compose: ComposeFile): ComposeFile => JSON.parse(JSON.stringify(compose)) as ComposeFile;

describe('docker-compose.yml', () => {
  const compose = readCompose();

  it('holds every rule: builds, commands, env against each config schema, ports, healthchecks, migrations first', () => {
    expect(composeProblems(compose)).toEqual([]);
  });

  it('runs every deployable and one migration per database (and Jaeger, only with --profile tracing)', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['postgres', 'redis', 'jaeger', 'secrets', ...DEPLOYABLES.map((d) => d.name), ...IMAGES.map((m) => `migrate-${m.name}`)].sort(),
    );
    expect(compose.services.jaeger).toMatchObject({ profiles: ['tracing'], ports: ['127.0.0.1:4318:4318', '127.0.0.1:16686:16686'] });
  });

  it('gives each deployable every variable its schema requires; secrets are files made on the first start, none is written in the file', () => {
    for (const d of DEPLOYABLES) {
      const env = environmentOf(compose.services[d.name] ?? {});
      for (const name of requiredVariables(d.schema)) {
        expect([d.name, name, env[name] !== undefined || env[`${name}_FILE`] !== undefined]).toEqual([d.name, name, true]);
      }
    }
    expect(compose.services.gateway?.environment).toMatchObject({
      PLATFORM_ADMIN_TOKEN_FILE: '/run/platform-secrets/admin-token',
      PLATFORM_INTERNAL_SECRET_FILE: '/run/platform-secrets/internal-secret',
    });
    // No token, secret or password anywhere in the file: no `adm_` token, no default after a credential variable.
    const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    expect(text).not.toMatch(/adm_[A-Za-z0-9_-]{8,}/);
    expect(text).not.toMatch(/(SECRET|TOKEN|PASSWORD)[A-Z_]*:-[^}]/);
    expect(text).not.toMatch(/not-for-production/);
  });

  it('every deployable has METRICS_PORT in its config schema, each default its own and apart from every API port (npm start on one machine)', () => {
    for (const d of DEPLOYABLES) expect([d.name, variables(d.schema).includes(d.metricsPortVariable)]).toEqual([d.name, true]);
    const metrics = DEPLOYABLES.map((d) => effectiveMetricsPort(d));
    expect(metrics).toEqual([9080, 9101, 9102, 9103, 9113]);
    expect(new Set([...metrics, ...DEPLOYABLES.map((d) => effectivePort(d))]).size).toBe(DEPLOYABLES.length * 2);
  });

  it('every deployable listens on every interface in its container (HOST=0.0.0.0, from its image), and whatever is published is on 127.0.0.1 only', () => {
    for (const d of DEPLOYABLES) {
      const env = environmentOf(compose.services[d.name] ?? {});
      expect([d.name, env.HOST ?? imageEnvironment(d.dir).HOST]).toEqual([d.name, '0.0.0.0']);
    }
    expect(compose.services.postgres?.ports).toEqual(['127.0.0.1:5432:5432']);
    expect(compose.services.redis?.ports).toEqual(['127.0.0.1:6379:6379']);
    expect(compose.services.gateway?.ports).toEqual(['127.0.0.1:8080:8080']);
  });

  it('interpolates like compose with an empty environment', () => {
    expect(interpolate('${A:-x}/${B-y}/${C}/$$D')).toBe('x/y//$D');
    expect(durationSeconds('1m30s')).toBe(90);
  });
});

describe('the compose rules catch', () => {
  const compose = readCompose();
  const cases: Array<[string, (c: ComposeFile) => void, string]> = [
    [
      'a variable the schema does not know',
      (c) => Object.assign(c.services.events?.environment as object, { EVENTS_PORTT: '4001' }),
      'events: EVENTS_PORTT is not a variable of its config schema',
    ],
    [
      'a worker given the API secret it does not read',
      (c) => Object.assign(c.services['pipelines-worker']?.environment as object, { PLATFORM_INTERNAL_SECRET: 'x'.repeat(32) }),
      'pipelines-worker: PLATFORM_INTERNAL_SECRET is not a variable',
    ],
    [
      'a required variable missing',
      (c) => delete (c.services.events?.environment as Record<string, string>).PLATFORM_INTERNAL_SECRET_FILE,
      'events: required variable PLATFORM_INTERNAL_SECRET is not set',
    ],
    [
      'a built-in admin token',
      (c) => Object.assign(c.services.gateway?.environment as object, { PLATFORM_ADMIN_TOKEN: '${PLATFORM_ADMIN_TOKEN:-adm_local-admin-token-0123456789}' }),
      'gateway: PLATFORM_ADMIN_TOKEN is written in docker-compose.yml',
    ],
    [
      'a built-in internal secret',
      (c) => Object.assign(c.services.events?.environment as object, { PLATFORM_INTERNAL_SECRET: 'local-internal-secret-0123456789' }),
      'events: PLATFORM_INTERNAL_SECRET is written in docker-compose.yml',
    ],
    [
      'a secret file outside every mounted volume',
      (c) => Object.assign(c.services.gateway?.environment as object, { PLATFORM_ADMIN_TOKEN_FILE: '/tmp/admin-token' }),
      'gateway: PLATFORM_ADMIN_TOKEN_FILE is /tmp/admin-token, which is in no volume it mounts',
    ],
    [
      'a gateway published on every interface',
      (c) => Object.assign(c.services.gateway ?? {}, { ports: ['8080:8080'] }),
      'gateway: publishes 8080 on every interface of the host',
    ],
    ['a variable without default', (c) => Object.assign(c.services.gateway?.environment as object, { LOG_LEVEL: '${LOG_LEVEL}' }), 'has no default'],
    [
      'a laptop default left in a container',
      (c) => delete (c.services.pipelines?.environment as Record<string, string>).PIPELINES_DATABASE_URL,
      'pipelines: PIPELINES_DATABASE_URL is not set, and its default postgresql://postgres@127.0.0.1:5432/platform_pipelines is loopback',
    ],
    [
      'a process without Redis (its fallback is the container itself)',
      (c) => delete (c.services.pipelines?.environment as Record<string, string>).REDIS_URL,
      'pipelines: sets the Redis variables of no topology',
    ],
    [
      'an upstream on the wrong port',
      (c) => Object.assign(c.services.gateway?.environment as object, { EVENTS_URL: 'http://events:4999' }),
      'gateway: EVENTS_URL uses port 4999, but events listens on 4001',
    ],
    [
      'loopback inside a container',
      (c) => Object.assign(c.services.events?.environment as object, { EVENTS_DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/platform_events' }),
      'which is not a compose service',
    ],
    [
      'a port that is not the configured one',
      (c) => Object.assign(c.services.events?.environment as object, { EVENTS_PORT: '5000' }),
      'events: exposes 4001, but it listens on 5000',
    ],
    [
      'a metrics port not exposed',
      (c) => Object.assign(c.services.events ?? {}, { expose: ['4001'] }),
      'events: does not expose its metrics port 9101 (METRICS_PORT)',
    ],
    [
      'a METRICS_PORT other than the exposed one',
      (c) => Object.assign(c.services.gateway?.environment as object, { METRICS_PORT: '9999' }),
      'gateway: does not expose its metrics port 9999',
    ],
    [
      'metrics on the API port',
      (c) => Object.assign(c.services.warehouse?.environment as object, { METRICS_PORT: '4002' }),
      'warehouse: serves /metrics on its API port 4002',
    ],
    [
      'an unknown depends_on',
      (c) => Object.assign(c.services.gateway?.depends_on as object, { nope: { condition: 'service_started' } }),
      'gateway: depends on nope, which is not a service',
    ],
    [
      'a service started before its migration',
      (c) => delete (c.services.events?.depends_on as Record<string, unknown>)['migrate-events'],
      'events: does not depend on migrate-events',
    ],
    [
      'a migration with another command',
      (c) => Object.assign(c.services['migrate-events'] ?? {}, { command: ['node', 'dist/main.js'] }),
      'migrate-events: command',
    ],
    ['a worker running the API', (c) => delete c.services['pipelines-worker']?.command, 'pipelines-worker: command'],
    [
      'a worker killed before its shutdown deadline',
      (c) => Object.assign(c.services['pipelines-worker'] ?? {}, { stop_grace_period: '20s' }),
      'does not exceed its 30s shutdown deadline',
    ],
    ['a missing Dockerfile', (c) => Object.assign(c.services.events?.build as object, { dockerfile: 'Dockerfile.nope' }), 'does not exist'],
    [
      'another Dockerfile',
      (c) => Object.assign(c.services.events?.build as object, { dockerfile: 'infra/README.md' }),
      'events: builds infra/README.md, expected Dockerfile',
    ],
    [
      'an image built from another package',
      (c) => Object.assign((c.services['migrate-events']?.build as { args: object }).args, { PACKAGE: '@platform/warehouse' }),
      'migrate-events: build argument PACKAGE is @platform/warehouse, expected @platform/events',
    ],
    [
      'an image without its ports',
      (c) => delete (c.services.pipelines?.build as { args: Record<string, string> }).args.PORTS,
      'pipelines: build argument PORTS is unset, expected 4003 9103 4013 9113',
    ],
    ['a gateway not published', (c) => delete c.services.gateway?.ports, 'gateway: not published on 8080'],
    [
      'a deployable on loopback in its container',
      (c) => Object.assign(c.services.events?.environment as object, { HOST: '127.0.0.1' }),
      'events: listens on HOST 127.0.0.1 (set) inside its container',
    ],
    [
      'postgres published on every interface',
      (c) => Object.assign(c.services.postgres ?? {}, { ports: ['5432:5432'] }),
      'postgres: publishes 5432 on every interface of the host',
    ],
    [
      'redis published on a public address',
      (c) => Object.assign(c.services.redis ?? {}, { ports: ['0.0.0.0:6379:6379'] }),
      'redis: publishes 6379 on 0.0.0.0 of the host',
    ],
    [
      'redis published on every interface (long syntax)',
      (c) => Object.assign(c.services.redis ?? {}, { ports: [{ target: 6379, published: 6379 }] }),
      'redis: publishes 6379 on every interface',
    ],
    ['postgres behind another service', (c) => Object.assign(c.services.postgres ?? {}, { depends_on: ['redis'] }), 'postgres: depends on other services'],
  ];
  it.each(cases)('%s', (_, mutate, problem) => {
    const mutated = copy(compose);
    mutate(mutated);
    expect(composeProblems(mutated).join('\n')).toContain(problem);
  });
});
