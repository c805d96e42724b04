import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import { commaList, rateLimitsArg } from '../args';
import type { CommandContext } from '../context';

export function keysCreate(keys: Command, ctx: CommandContext): void {
  keys
    .command('create')
    .description('create an API key; its token is printed once, in this answer only')
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--name <name>', "the key's name")
    .option('--scopes <a,b>', 'its scopes (default: unrestricted)')
    .option('--expires-at <RFC3339>', 'when it stops working (default: never)')
    .option('--rate-limits <bucket=N,...>', "its own limits per bucket, requests per minute (default: the platform's)")
    .action(async (options: { workspace: string; name?: string; scopes?: string; expiresAt?: string; rateLimits?: string }) => {
      const body = {
        name: options.name,
        ...(options.scopes === undefined ? {} : { scopes: commaList(options.scopes) }),
        ...(options.expiresAt === undefined ? {} : { expires_at: options.expiresAt }),
        ...(options.rateLimits === undefined ? {} : { rate_limits: rateLimitsArg(options.rateLimits) }),
      };
      const admin = await ctx.deps.admin();
      ctx.print(await unwrap(admin.POST('/workspaces/{id}/api-keys', { params: { path: { id: options.workspace } }, body: body as never })));
    });
}
