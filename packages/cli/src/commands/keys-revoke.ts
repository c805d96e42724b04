import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import type { CommandContext } from '../context';

export function keysRevoke(keys: Command, ctx: CommandContext): void {
  keys
    .command('revoke')
    .description('revoke an API key; every gateway refuses it at once; prints the revoked key')
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--key <key-id>', 'the key')
    .action(async (options: { workspace: string; key: string }) => {
      const admin = await ctx.deps.admin();
      const path = { id: options.workspace, key_id: options.key };
      await unwrap(admin.DELETE('/workspaces/{id}/api-keys/{key_id}', { params: { path } }));
      ctx.print(await unwrap(admin.GET('/workspaces/{id}/api-keys/{key_id}', { params: { path } })));
    });
}
