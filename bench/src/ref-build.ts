/**
 * Another commit's build of the gateway, for an A/B of two builds (`--a-ref=REF`): a throwaway
 * git worktree of that commit under the temp dir, keyed by its sha, installed offline and built as
 * far as the gateway needs. A worktree built before is reused; one left half-made starts over.
 * `git worktree remove <dir>` deletes one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

const REPOSITORY = join(__dirname, '..', '..');
/** Written last: its presence means the worktree's gateway is built. */
const BUILT_MARKER = '.bench-built';

export interface RefBuild {
  ref: string;
  sha: string;
  /** The worktree: `gateway/dist/main.js` is its gateway. */
  root: string;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.slice(-4_000);
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed (${result.status ?? result.signal ?? result.error?.message}):\n${output}`);
  }
  return result.stdout.trim();
}

export function buildOfRef(ref: string, log: (line: string) => void): RefBuild {
  const sha = run('git', ['rev-parse', '--verify', `${ref}^{commit}`], REPOSITORY);
  const root = join(os.tmpdir(), 'platform-bench-refs', sha);
  const build = { ref, sha, root };
  if (existsSync(join(root, BUILT_MARKER))) {
    log(`gateway A: ${ref} (${sha.slice(0, 7)}), built before in ${root}`);
    return build;
  }
  if (existsSync(root)) {
    spawnSync('git', ['worktree', 'remove', '--force', root], { cwd: REPOSITORY });
    rmSync(root, { recursive: true, force: true });
  }
  run('git', ['worktree', 'prune'], REPOSITORY);
  log(`gateway A: ${ref} (${sha.slice(0, 7)}): git worktree in ${root}, pnpm install --offline, build of @platform/gateway and what it needs`);
  run('git', ['worktree', 'add', '--detach', root, sha], REPOSITORY);
  run('pnpm', ['install', '--offline', '--frozen-lockfile'], root);
  // Prisma's CLI wants a schema-engine binary even for generate, which never runs it: any executable does.
  run('pnpm', ['turbo', 'run', 'build', '--filter=@platform/gateway...', '--output-logs=errors-only'], root, {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
  });
  writeFileSync(join(root, BUILT_MARKER), `${ref} ${sha}\n`);
  log(`gateway A: built`);
  return build;
}
