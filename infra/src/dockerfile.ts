import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { type Deployable, effectivePort, entryProblems, EVERY_INTERFACE, imageBuildArgs, metricsPortOrProblem, ROOT } from './deployables';

/** The Node major line of package.json's `engines` (>=N): the images run the same line as everything else. */
const NODE_MAJOR = /\d+/.exec((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node)![0];

/** The one Dockerfile: every image builds from it, its package and ports given as build arguments. */
export const DOCKERFILE = 'Dockerfile';

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: Stage[];
}

/** Parses a Dockerfile: comments dropped, `\` continuations joined, instructions grouped by stage. */
export function parseDockerfile(text: string): Dockerfile {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line.startsWith('#')) return; // comments, parser directives, and comment lines inside a continuation
    if (!pending && !line) return;
    if (!pending) start = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    if (!full) return;
    const match = /^(\S+)\s*(.*)$/.exec(full);
    if (match?.[1]) instructions.push({ keyword: match[1].toUpperCase(), args: match[2] ?? '', line: start });
  });
  const file: Dockerfile = { globalArgs: {}, stages: [] };
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [base = '', as, name] = instruction.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      file.stages.push({ name: as?.toUpperCase() === 'AS' && name ? name : String(file.stages.length), base, instructions: [] });
    } else if (file.stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [name, fallback] = parseArg(instruction.args);
        if (fallback !== undefined) file.globalArgs[name] = fallback;
      }
    } else {
      file.stages.at(-1)?.instructions.push(instruction);
    }
  }
  return file;
}

/** `ARG NAME=default` as [name, default]; a bare `ARG NAME` has no default of its own. */
function parseArg(args: string): [string, string | undefined] {
  const at = args.indexOf('=');
  return at < 0 ? [args.trim(), undefined] : [args.slice(0, at).trim(), args.slice(at + 1).trim()];
}

/** The ARGs a Dockerfile declares, before the first FROM and in any stage. */
export function declaredArgs(file: Dockerfile): string[] {
  const inStages = file.stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'ARG').map((i) => parseArg(i.args)[0]));
  return [...new Set([...Object.keys(file.globalArgs), ...inStages])];
}

/** Instructions whose arguments Docker does not substitute (exec form, run as written). */
const NOT_SUBSTITUTED = new Set(['CMD', 'ENTRYPOINT', 'HEALTHCHECK']);

/**
 * The Dockerfile as Docker builds it with these build arguments: `${NAME}` replaced in FROM by the
 * global ARGs, and in a stage's instructions by the ARGs declared in that stage so far (a build
 * argument wins over a default; a bare ARG takes the global one) and its ENVs (a RUN's shell sees
 * both). What is not declared stays as written.
 */
export function resolveDockerfile(file: Dockerfile, buildArgs: Record<string, string>): Dockerfile {
  const globals = Object.fromEntries(Object.entries(file.globalArgs).map(([name, fallback]) => [name, buildArgs[name] ?? fallback]));
  const stages = file.stages.map((stage) => {
    const vars: Record<string, string> = {};
    const instructions = stage.instructions.map((instruction) => {
      const args = NOT_SUBSTITUTED.has(instruction.keyword) ? instruction.args : substitute(instruction.args, vars);
      if (instruction.keyword === 'ARG') {
        const [name, fallback] = parseArg(args);
        const value = buildArgs[name] ?? fallback ?? globals[name];
        if (value !== undefined) vars[name] = value;
      }
      const resolved = { ...instruction, args };
      if (instruction.keyword === 'ENV') Object.assign(vars, envOf({ ...stage, instructions: [resolved] }));
      return resolved;
    });
    return { ...stage, base: substitute(stage.base, globals), instructions };
  });
  return { globalArgs: globals, stages };
}

/** `${NAME}` and `$NAME` replaced from the given variables. */
export function substitute(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a?: string, b?: string) => vars[(a ?? b) as string] ?? whole);
}

/** The exec (JSON) form of CMD, ENTRYPOINT or HEALTHCHECK CMD; undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(args);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/** ENV in both forms (`ENV A=1 B=2` and `ENV A 1`). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { keyword, args } of stage.instructions) {
    if (keyword !== 'ENV') continue;
    if (!(args.split(/\s+/)[0] ?? '').includes('=')) {
      const [name = '', ...rest] = args.split(/\s+/);
      env[name] = rest.join(' ');
    } else {
      for (const pair of args.match(/\S+=("[^"]*"|\S*)/g) ?? []) {
        const [name = '', ...rest] = pair.split('=');
        env[name] = rest.join('=').replace(/^"|"$/g, '');
      }
    }
  }
  return env;
}

const runs = (stage: Stage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const last = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).at(-1);

/**
 * What the Dockerfile must do to build a deployable's image with the image's build arguments, as a
 * list of problems (empty: none).
 */
export function dockerfileProblems(
  text: string,
  d: Deployable,
  workspace: { pnpmVersion: string; injectWorkspacePackages: boolean },
  buildArgs: Record<string, string> = imageBuildArgs(d.dir),
): string[] {
  const where = `${DOCKERFILE} (${d.name} image)`;
  const problems: string[] = [];
  const parsed = parseDockerfile(text);
  if (parsed.stages.length < 2) return [`${where}: not multi-stage (${parsed.stages.length} FROM)`];
  const declared = declaredArgs(parsed);
  for (const name of Object.keys(buildArgs)) {
    if (!declared.includes(name)) problems.push(`${where}: build argument ${name} is not declared by an ARG (Docker ignores it)`);
  }
  const file = resolveDockerfile(parsed, buildArgs);
  const runtime = file.stages.at(-1) as Stage;

  for (const stage of file.stages) {
    const slimNode = new RegExp(`^node:${NODE_MAJOR}([.\\d]*)?-(bookworm-|bullseye-|trixie-)?slim(@sha256:[a-f0-9]{64})?$`);
    if (!file.stages.some((s) => s.name === stage.base) && !slimNode.test(stage.base)) {
      problems.push(`${where}: stage ${stage.name} is FROM ${stage.base}, not a node:${NODE_MAJOR} slim image`);
    }
  }

  // pnpm: the version package.json pins, installed from the npm registry.
  const pnpmInstall = file.stages.flatMap(runs).find((r) => /npm (install|i) (-g|--global) pnpm@/.test(r));
  const pinned = /pnpm@(\S+)/.exec(pnpmInstall ?? '')?.[1];
  if (pinned !== workspace.pnpmVersion) problems.push(`${where}: installs pnpm@${pinned ?? '?'}, package.json pins pnpm@${workspace.pnpmVersion}`);

  const allRuns = file.stages.slice(0, -1).flatMap(runs);
  if (!allRuns.some((r) => /\bpnpm install\b/.test(r) && r.includes('--frozen-lockfile')))
    problems.push(`${where}: no \`pnpm install --frozen-lockfile\` in a build stage`);
  const filter = (r: string) => r.includes(`--filter=${d.packageName}`) || r.includes(`--filter ${d.packageName}`);
  if (!allRuns.some((r) => /\bturbo run build\b/.test(r) && r.includes(`--filter=${d.packageName}...`)))
    problems.push(`${where}: no \`turbo run build --filter=${d.packageName}...\``);

  // The runtime stage: the output of `pnpm deploy --prod` of this package, and nothing installed there.
  const deployStage = file.stages.slice(0, -1).find((s) => runs(s).some((r) => /\bpnpm\b.*\bdeploy\b/.test(r) && filter(r)));
  const deployRun = deployStage && runs(deployStage).find((r) => /\bpnpm\b.*\bdeploy\b/.test(r) && filter(r));
  const deployDir = deployRun?.trim().split(/\s+/).at(-1);
  if (!deployStage || !deployRun || !deployDir) {
    problems.push(`${where}: no \`pnpm --filter=${d.packageName} deploy\` stage`);
  } else {
    if (!/(^|\s)(--prod|-P)(\s|$)/.test(deployRun)) problems.push(`${where}: pnpm deploy without --prod (dev dependencies would ship)`);
    if (!workspace.injectWorkspacePackages && !/(^|\s)--legacy(\s|$)/.test(deployRun)) {
      problems.push(`${where}: pnpm 10 deploy needs --legacy unless the workspace sets inject-workspace-packages`);
    }
    const copies = runtime.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    const sources = new Set<string>();
    for (const copy of copies) {
      const from = /--from=(\S+)/.exec(copy.args)?.[1];
      const paths = copy.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      const source = paths[0] ?? '';
      if (from !== deployStage.name || !source.startsWith(`${deployDir}/`)) {
        problems.push(
          `${where}: runtime stage copies ${source} from ${from ?? 'the build context'}, not from the pnpm deploy output (${deployStage.name}:${deployDir})`,
        );
      } else {
        sources.add(source.slice(deployDir.length + 1).replace(/\/$/, ''));
      }
    }
    for (const needed of ['package.json', 'node_modules', 'dist', 'prisma']) {
      if (!sources.has(needed)) problems.push(`${where}: runtime stage does not copy ${needed} from the pnpm deploy output`);
    }
  }
  for (const run of runs(runtime)) {
    if (/\b(npm|pnpm|yarn)\s+(install|i|ci|add)\b/.test(run))
      problems.push(`${where}: runtime stage installs packages (\`${run}\`): only the deploy output's production dependencies belong there`);
  }

  const user = last(runtime, 'USER')?.args.trim();
  if (user !== 'node') problems.push(`${where}: runtime stage does not end as USER node (uid 1000, what the Kubernetes manifests run as): ${user ?? 'root'}`);
  if (envOf(runtime).NODE_ENV !== 'production') problems.push(`${where}: runtime stage does not set NODE_ENV=production`);
  const host = envOf(runtime).HOST;
  if (!EVERY_INTERFACE.includes(host ?? '')) {
    problems.push(
      `${where}: runtime stage does not set HOST=0.0.0.0 (${host === undefined ? 'unset' : host}): the process would listen on the container itself only`,
    );
  }

  const port = effectivePort(d);
  const exposed = runtime.instructions.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map((p) => Number.parseInt(p, 10)));
  if (!exposed.includes(port)) problems.push(`${where}: does not EXPOSE ${port} (${d.portVariable})`);
  const metricsPort = metricsPortOrProblem(where, d);
  if (typeof metricsPort === 'string') problems.push(metricsPort);
  else if (!exposed.includes(metricsPort)) problems.push(`${where}: does not EXPOSE ${metricsPort} (${d.metricsPortVariable}, GET /metrics)`);

  // The HEALTHCHECK names the port variable and its default, itself or through an ENV of the image.
  const healthcheck = last(runtime, 'HEALTHCHECK')?.args ?? '';
  const env = envOf(runtime);
  const names = (value: string) => [value, ...Object.keys(env).filter((name) => env[name] === value)];
  const asks = (value: string) => names(value).some((name) => new RegExp(`\\b${name}\\b`).test(healthcheck));
  if (!healthcheck.includes('/healthz') || !asks(d.portVariable) || !asks(String(port))) {
    problems.push(`${where}: HEALTHCHECK does not GET /healthz on ${d.portVariable} (${port} unless set)`);
  }

  const cmd = execForm(last(runtime, 'CMD')?.args ?? '');
  const expected = ['node', '--enable-source-maps', d.entry];
  if (last(runtime, 'ENTRYPOINT')) problems.push(`${where}: an ENTRYPOINT would change every command (compose and Kubernetes pass full commands)`);
  if (!cmd || cmd.join(' ') !== expected.join(' ')) {
    problems.push(`${where}: CMD is ${JSON.stringify(cmd ?? last(runtime, 'CMD')?.args)}, expected ${JSON.stringify(expected)}`);
  } else {
    problems.push(...entryProblems(where, d.dir, cmd[2] as string));
  }
  return problems;
}

export function readDockerfile(): string {
  return readFileSync(join(ROOT, DOCKERFILE), 'utf8');
}

/** The ENV of a package's image (the runtime stage, with its build arguments): what every container of it starts with. */
export function imageEnvironment(dir: string): Record<string, string> {
  const runtime = resolveDockerfile(parseDockerfile(readDockerfile()), imageBuildArgs(dir)).stages.at(-1);
  return runtime ? envOf(runtime) : {};
}
