import { Option, type Command } from 'commander';
import { unwrap } from '@platform/client';
import { commaList, rateLimitsArg, valueOrNull } from '../args';
import type { CommandContext } from '../context';

export function keysUpdate(keys: Command, ctx: CommandContext): void {
  keys
    .command('update')
    .description("change an API key's name, scopes or limits (the options given); every gateway applies it at once")
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--key <key-id>', 'the key')
    .option('--name <name>', 'its new name')
    .option('--scopes <a,b>', 'its new scopes')
    .addOption(new Option('--unrestricted', 'no scope restriction').conflicts('scopes'))
    .option('--rate-limits <bucket=N,...>', 'its new limits per bucket (replaces them all)')
    .addOption(new Option('--default-limits', "back to the platform's limits").conflicts('rateLimits'))
    .action(
      async (
        options: { workspace: string; key: string; name?: string; scopes?: string; unrestricted?: boolean; rateLimits?: string; defaultLimits?: boolean },
        command: Command,
      ) => {
        const body = {
          name: options.name,
          scopes: valueOrNull(options.scopes, options.unrestricted, commaList),
          rate_limits: valueOrNull(options.rateLimits, options.defaultLimits, rateLimitsArg),
        };
        if (body.name === undefined && body.scopes === undefined && body.rate_limits === undefined) {
          command.error('nothing to change: give --name, --scopes, --unrestricted, --rate-limits or --default-limits');
        }
        const admin = await ctx.deps.admin();
        const path = { id: options.workspace, key_id: options.key };
        ctx.print(await unwrap(admin.PATCH('/workspaces/{id}/api-keys/{key_id}', { params: { path }, body: body as never })));
      },
    );
}
