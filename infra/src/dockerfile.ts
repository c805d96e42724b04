import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { type Deployable, effectivePort, entryProblems, EVERY_INTERFACE, metricsPortOrProblem, ROOT } from './deployables';

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
      if (instruction.keyword === 'ARG') Object.assign(file.globalArgs, parseArg(instruction.args));
    } else {
      file.stages.at(-1)?.instructions.push(instruction);
    }
  }
  return file;
}

/** `ARG NAME=default`; a bare `ARG NAME` keeps the value it had (a global ARG's default). */
function parseArg(args: string): Record<string, string> {
  const at = args.indexOf('=');
  return at < 0 ? {} : { [args.slice(0, at).trim()]: args.slice(at + 1).trim() };
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

/** What a Dockerfile must do for a deployable's package, as a list of problems (empty: none). */
export function dockerfileProblems(text: string, d: Deployable, workspace: { pnpmVersion: string; injectWorkspacePackages: boolean }): string[] {
  const where = `${d.dir}/Dockerfile`;
  const problems: string[] = [];
  const file = parseDockerfile(text);
  if (file.stages.length < 2) return [`${where}: not multi-stage (${file.stages.length} FROM)`];
  const runtime = file.stages.at(-1) as Stage;

  for (const stage of file.stages) {
    const base = substitute(stage.base, file.globalArgs);
    if (!file.stages.some((s) => s.name === base) && !/^node:20([.\d]*)?-(bookworm-|bullseye-|trixie-)?slim(@sha256:[a-f0-9]{64})?$/.test(base)) {
      problems.push(`${where}: stage ${stage.name} is FROM ${base}, not a node:20 slim image`);
    }
  }

  // pnpm: the version package.json pins, installed from the npm registry.
  const argsOf = (stage: Stage) => {
    const vars = { ...file.globalArgs };
    for (const i of stage.instructions) if (i.keyword === 'ARG') Object.assign(vars, parseArg(i.args));
    return vars;
  };
  const pnpmInstall = file.stages.flatMap((s) => runs(s).map((r) => substitute(r, argsOf(s)))).find((r) => /npm (install|i) (-g|--global) pnpm@/.test(r));
  const pinned = /pnpm@(\S+)/.exec(pnpmInstall ?? '')?.[1];
  if (pinned !== workspace.pnpmVersion) problems.push(`${where}: installs pnpm@${pinned ?? '?'}, package.json pins pnpm@${workspace.pnpmVersion}`);

  const allRuns = file.stages.slice(0, -1).flatMap(runs);
  if (!allRuns.some((r) => /\bpnpm install\b/.test(r) && r.includes('--frozen-lockfile'))) problems.push(`${where}: no \`pnpm install --frozen-lockfile\` in a build stage`);
  const filter = (r: string) => r.includes(`--filter=${d.packageName}`) || r.includes(`--filter ${d.packageName}`);
  if (!allRuns.some((r) => /\bturbo run build\b/.test(r) && r.includes(`--filter=${d.packageName}...`))) problems.push(`${where}: no \`turbo run build --filter=${d.packageName}...\``);

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
        problems.push(`${where}: runtime stage copies ${source} from ${from ?? 'the build context'}, not from the pnpm deploy output (${deployStage.name}:${deployDir})`);
      } else {
        sources.add(source.slice(deployDir.length + 1).replace(/\/$/, ''));
      }
    }
    for (const needed of ['package.json', 'node_modules', 'dist', 'prisma']) {
      if (!sources.has(needed)) problems.push(`${where}: runtime stage does not copy ${needed} from the pnpm deploy output`);
    }
  }
  for (const run of runs(runtime)) {
    if (/\b(npm|pnpm|yarn)\s+(install|i|ci|add)\b/.test(run)) problems.push(`${where}: runtime stage installs packages (\`${run}\`): only the deploy output's production dependencies belong there`);
  }

  const user = last(runtime, 'USER')?.args.trim();
  if (user !== 'node') problems.push(`${where}: runtime stage does not end as USER node (uid 1000, what the Kubernetes manifests run as): ${user ?? 'root'}`);
  if (envOf(runtime).NODE_ENV !== 'production') problems.push(`${where}: runtime stage does not set NODE_ENV=production`);
  const host = envOf(runtime).HOST;
  if (!EVERY_INTERFACE.includes(host ?? '')) {
    problems.push(`${where}: runtime stage does not set HOST=0.0.0.0 (${host === undefined ? 'unset' : host}): the process would listen on the container itself only`);
  }

  const port = effectivePort(d);
  const exposed = runtime.instructions.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map((p) => Number.parseInt(p, 10)));
  if (!exposed.includes(port)) problems.push(`${where}: does not EXPOSE ${port} (${d.portVariable})`);
  const metricsPort = metricsPortOrProblem(where, d);
  if (typeof metricsPort === 'string') problems.push(metricsPort);
  else if (!exposed.includes(metricsPort)) problems.push(`${where}: does not EXPOSE ${metricsPort} (${d.metricsPortVariable}, GET /metrics)`);

  const healthcheck = last(runtime, 'HEALTHCHECK')?.args ?? '';
  if (!healthcheck.includes('/healthz') || !(healthcheck.includes(d.portVariable) || healthcheck.includes(String(port)))) {
    problems.push(`${where}: HEALTHCHECK does not GET /healthz on ${d.portVariable}`);
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

export function dockerfileOf(dir: string): string {
  return join(ROOT, dir, 'Dockerfile');
}

/** The ENV of a package's image (its Dockerfile's runtime stage): what every container of it starts with. */
export function imageEnvironment(dir: string): Record<string, string> {
  const runtime = parseDockerfile(readFileSync(dockerfileOf(dir), 'utf8')).stages.at(-1);
  return runtime ? envOf(runtime) : {};
}
