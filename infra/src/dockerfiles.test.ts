import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { IMAGES, ROOT, deployable, effectiveMetricsPort, effectivePort, entryProblems, imageBuildArgs, readJson } from './deployables';
import { dockerfileProblems, execForm, parseDockerfile, readDockerfile, resolveDockerfile } from './dockerfile';
import { isIgnored, parseDockerignore } from './dockerignore';

const pnpmVersion = readJson<{ packageManager: string }>('package.json').packageManager.replace(/^pnpm@/, '');
const workspaceSettings = parse(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')) as { packages: string[]; injectWorkspacePackages?: boolean };
const workspace = {
  pnpmVersion,
  // pnpm's settings live in pnpm-workspace.yaml (there is no .npmrc).
  injectWorkspacePackages: workspaceSettings.injectWorkspacePackages === true,
};
const dockerfile = readDockerfile();
/** The runtime stage of a package's image, its build arguments substituted. */
const runtimeOf = (dir: string) => resolveDockerfile(parseDockerfile(dockerfile), imageBuildArgs(dir)).stages.at(-1);

describe('the Dockerfile, for each image', () => {
  it.each(IMAGES.map((m) => [m.name]))('%s: multi-stage, pnpm deploy --prod into the runtime stage, USER node, CMD from src', (name) => {
    expect(dockerfileProblems(dockerfile, deployable(name), workspace)).toEqual([]);
  });

  it('the worker runs from the pipelines image', () => {
    expect(deployable('pipelines-worker').dir).toBe(deployable('pipelines').dir);
    expect(imageBuildArgs(deployable('pipelines-worker').dir).PACKAGE).toBe('@platform/pipelines');
  });

  it('the pipelines image exposes the worker health port too', () => {
    const runtime = runtimeOf('services/pipelines');
    const exposed = runtime?.instructions.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map(Number));
    expect(exposed).toEqual(expect.arrayContaining([effectivePort(deployable('pipelines')), effectivePort(deployable('pipelines-worker'))]));
    expect(exposed).toEqual(expect.arrayContaining([effectiveMetricsPort(deployable('pipelines')), effectiveMetricsPort(deployable('pipelines-worker'))]));
  });

  it.each(IMAGES.map((m) => [m.dir]))('%s: the build puts the generated Prisma client in dist/ and ships SQL migrations in prisma/', (dir) => {
    // The runtime stage copies dist/ and prisma/ of the deploy output: the client must be compiled into dist.
    expect(existsSync(join(ROOT, dir, 'dist/generated/prisma/client.js'))).toBe(true);
    const migrations = readdirSync(join(ROOT, dir, 'prisma/migrations'), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(migrations.length).toBeGreaterThan(0);
    for (const m of migrations) expect(existsSync(join(ROOT, dir, 'prisma/migrations', m.name, 'migration.sql'))).toBe(true);
  });

  it('HEALTHCHECK is a command node can run in the slim image (no curl there)', () => {
    for (const { dir } of IMAGES) {
      const healthcheck = runtimeOf(dir)?.instructions.find((i) => i.keyword === 'HEALTHCHECK');
      const command = execForm(healthcheck?.args.replace(/^(--\S+\s+)*CMD\s+/, '') ?? '');
      expect(command?.slice(0, 2)).toEqual(['node', '-e']);
    }
  });
});

describe('the Dockerfile rules catch', () => {
  const events = dockerfile;
  const cases: Array<[string, (text: string) => string, string]> = [
    ['a single stage', (t) => t.slice(t.indexOf('FROM ${NODE_IMAGE} AS runtime')), 'not multi-stage'],
    ['a root runtime', (t) => t.replace('USER node', 'USER root'), 'does not end as USER node'],
    ['no USER', (t) => t.replace('USER node\n', ''), 'does not end as USER node'],
    ['a deploy with dev dependencies', (t) => t.replace('deploy --prod --legacy', 'deploy --legacy'), 'without --prod'],
    ['pnpm 10 deploy without --legacy', (t) => t.replace('deploy --prod --legacy', 'deploy --prod'), 'needs --legacy'],
    [
      'node_modules of the whole workspace',
      (t) => t.replace('COPY --from=build /deploy/node_modules', 'COPY --from=build /repo/node_modules'),
      'not from the pnpm deploy output',
    ],
    ['an install in the runtime stage', (t) => t.replace('USER node', 'RUN npm install --omit=dev\nUSER node'), 'runtime stage installs packages'],
    ['no migrations in the image', (t) => t.replace('COPY --from=build /deploy/prisma ./prisma\n', ''), 'does not copy prisma'],
    ['another CMD', (t) => t.replace('"dist/main.js"]', '"dist/server.js"]'), 'expected ["node","--enable-source-maps","dist/main.js"]'],
    ['a shell-form CMD', (t) => t.replace(/CMD \[.*\]\n$/, 'CMD node dist/main.js\n'), 'expected ["node","--enable-source-maps","dist/main.js"]'],
    ['the wrong port', (t) => t.replace('EXPOSE ${PORTS}', 'EXPOSE 4999 9101'), 'does not EXPOSE 4001'],
    ['no metrics port', (t) => t.replace('EXPOSE ${PORTS}', 'EXPOSE ${PORT}'), 'does not EXPOSE 9101 (METRICS_PORT, GET /metrics)'],
    ['a build argument without its ARG', (t) => t.replace('ARG PORTS\n', ''), 'build argument PORTS is not declared'],
    [
      'an ARG declared after its use',
      (t) => t.replace('ARG PACKAGE\n', '').replace('USER node\n', 'USER node\nARG PACKAGE\n'),
      'no `turbo run build --filter=@platform/events...`',
    ],
    [
      'a HEALTHCHECK on a fixed other port',
      (t) => t.replace('HEALTHCHECK_PORT=${PORT}', 'HEALTHCHECK_PORT=4999'),
      'HEALTHCHECK does not GET /healthz on EVENTS_PORT (4001 unless set)',
    ],
    [
      'a HEALTHCHECK that ignores the port variable',
      (t) => t.replace('process.env[process.env.HEALTHCHECK_PORT_VARIABLE] || ', ''),
      'HEALTHCHECK does not GET /healthz on EVENTS_PORT',
    ],
    ['another pnpm', (t) => t.replace('PNPM_VERSION=10', 'PNPM_VERSION=9'), 'package.json pins pnpm@'],
    ['no frozen lockfile', (t) => t.replace(' --frozen-lockfile', ''), '--frozen-lockfile'],
    ['a build of another package', (t) => t.replace('--filter=${PACKAGE}...', '--filter=@platform/core...'), 'turbo run build --filter=@platform/events...'],
    ['no NODE_ENV', (t) => t.replace('ENV NODE_ENV=production\n', ''), 'NODE_ENV=production'],
    [
      'no HOST (the process would listen on the container itself)',
      (t) => t.replace('ENV HOST=0.0.0.0\n', ''),
      'runtime stage does not set HOST=0.0.0.0 (unset)',
    ],
    ['HOST on loopback', (t) => t.replace('ENV HOST=0.0.0.0', 'ENV HOST=127.0.0.1'), 'runtime stage does not set HOST=0.0.0.0 (127.0.0.1)'],
    ['a full base image', (t) => t.replace('node:24-bookworm-slim', 'node:24'), 'not a node:24 slim image'],
  ];
  it.each(cases)('%s', (_, mutate, problem) => {
    const mutated = mutate(events);
    expect(mutated).not.toBe(events);
    expect(dockerfileProblems(mutated, deployable('events'), workspace).join('\n')).toContain(problem);
  });

  it('a command whose src/*.ts does not exist', () => {
    expect(entryProblems('x', 'services/events', 'dist/main.js')).toEqual([]);
    expect(entryProblems('x', 'services/events', 'dist/server.js')).toEqual(['x: runs dist/server.js but services/events/src/server.ts does not exist']);
    expect(entryProblems('x', 'services/events', 'main.js')).toEqual(['x: main.js is not a dist/*.js script']);
  });
});

describe('.dockerignore', () => {
  const patterns = parseDockerignore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));

  it('keeps out what the host built or installed, and secrets', () => {
    for (const path of [
      'node_modules/.modules.yaml',
      'services/events/node_modules/zod/package.json',
      'gateway/dist/main.js',
      'services/pipelines/src/generated/prisma/client.ts',
      '.git/HEAD',
      '.env',
      'services/events/.env.local',
      'infra/k8s/overlays/production/secrets.env',
    ]) {
      expect([path, isIgnored(path, patterns)]).toEqual([path, true]);
    }
  });

  it('copies from the build context only files that exist (a COPY of a missing file fails the build)', () => {
    const copied = dockerfile
      .split('\n')
      .filter((line) => /^COPY\s/.test(line) && !/--from=/.test(line))
      .flatMap((line) =>
        line
          .trim()
          .split(/\s+/)
          .slice(1, -1)
          .filter((arg) => !arg.startsWith('--')),
      );
    expect(copied.length).toBeGreaterThan(0);
    for (const path of copied.filter((p) => p !== '.')) expect([path, existsSync(join(ROOT, path))]).toEqual([path, true]);
  });

  it('lets in everything `pnpm install --frozen-lockfile` and the builds read', () => {
    const packageDirs = workspaceSettings.packages.flatMap((glob) =>
      glob.endsWith('/*')
        ? readdirSync(join(ROOT, glob.slice(0, -2)), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => `${glob.slice(0, -2)}/${e.name}`)
        : [glob],
    );
    const needed = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'turbo.json', 'tsconfig.base.json', 'scripts/prisma-generate.mjs'];
    for (const dir of packageDirs.filter((d) => existsSync(join(ROOT, d, 'package.json')))) needed.push(`${dir}/package.json`);
    for (const { dir } of IMAGES) {
      needed.push(`${dir}/src/main.ts`, `${dir}/src/migrate.ts`, `${dir}/tsconfig.build.json`, `${dir}/prisma/schema.prisma`, `${dir}/prisma.config.ts`);
      for (const m of readdirSync(join(ROOT, dir, 'prisma/migrations'))) needed.push(`${dir}/prisma/migrations/${m}`);
    }
    needed.push('packages/core/src/index.ts', 'packages/core/tsconfig.build.json');
    for (const path of needed) expect([path, isIgnored(path, patterns)]).toEqual([path, false]);
  });

  it('the matcher follows Docker: ** spans directories, a parent match excludes, ! re-includes', () => {
    const p = parseDockerignore('**/dist\nsecret/*\n!secret/keep\n');
    expect(isIgnored('a/b/dist/x.js', p)).toBe(true);
    expect(isIgnored('dist', p)).toBe(true);
    expect(isIgnored('distant/x', p)).toBe(false);
    expect(isIgnored('secret/a', p)).toBe(true);
    expect(isIgnored('secret/keep', p)).toBe(false);
  });
});
