import { Command, CommanderError } from 'commander';
import { PlatformApiError } from '@platform/client';
import { demoSeed } from './commands/demo-seed';
import { keysCreate } from './commands/keys-create';
import { keysList } from './commands/keys-list';
import { keysRevoke } from './commands/keys-revoke';
import { keysRoll } from './commands/keys-roll';
import { keysUpdate } from './commands/keys-update';
import { keysUsage } from './commands/keys-usage';
import { migrate } from './commands/migrate';
import { quotasSet } from './commands/quotas-set';
import { quotasShow } from './commands/quotas-show';
import { workspacesCreate } from './commands/workspaces-create';
import { workspacesList } from './commands/workspaces-list';
import type { CliDeps, CliIo, CommandContext } from './context';

const DESCRIPTION = [
  "The platform's admin commands; each prints JSON.",
  'workspaces, keys and quotas call the admin API of the gateway at PLATFORM_URL (default http://127.0.0.1:8080) with PLATFORM_ADMIN_TOKEN,',
  "so a key change takes the gateway's one path (saved, evicted and announced to every instance).",
  "migrate and demo-seed work on the gateway's database (GATEWAY_DATABASE_URL; migrate on GATEWAY_DIRECT_DATABASE_URL when it is set, past a transaction-mode pooler).",
].join(' ');

/** Exit codes: 0 done, 1 failed (the API's error body, or why), 2 usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** The `platform` command tree; a new one per run, since commander keeps the parsed options on it. */
export function createProgram(ctx: CommandContext): Command {
  const strip = (text: string) => text.replace(/\n$/, '');
  // Set before the subcommands are added: `.command()` copies them to each.
  const program = new Command('platform')
    .description(DESCRIPTION)
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (text) => ctx.io.out(strip(text)), writeErr: (text) => ctx.io.err(strip(text)) });

  const workspaces = program.command('workspaces').description('create and list workspaces');
  workspacesCreate(workspaces, ctx);
  workspacesList(workspaces, ctx);

  const keys = program.command('keys').description("a workspace's API keys");
  keysCreate(keys, ctx);
  keysList(keys, ctx);
  keysUpdate(keys, ctx);
  keysRoll(keys, ctx);
  keysUsage(keys, ctx);
  keysRevoke(keys, ctx);

  const quotas = program.command('quotas').description("a workspace's quotas");
  quotasShow(quotas, ctx);
  quotasSet(quotas, ctx);

  migrate(program, ctx);
  demoSeed(program, ctx);
  return program;
}

/**
 * Runs one command line (without the node and script arguments) and returns its exit code. The
 * CLI passes what it was given: the admin API validates it, and its error body is printed as it is.
 */
export async function runCli(argv: string[], deps: CliDeps, io: CliIo): Promise<number> {
  const program = createProgram({ deps, io, print: (value) => io.out(JSON.stringify(value, null, 2)) });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    // Help asked for exits 0; a usage error (commander printed it, and where to find the usage) 2.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof PlatformApiError) {
      io.err(err.status === 0 ? `gateway unreachable: ${err.message}` : JSON.stringify({ error: err.details }));
      return EXIT.failed;
    }
    const { isTransientBackendError } = await import('@platform/core');
    io.err(isTransientBackendError(err) ? `database unreachable: ${(err as Error).message}` : `failed: ${(err as Error).message}`);
    return EXIT.failed;
  }
}
