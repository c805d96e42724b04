import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import { numberArg } from '../args';
import type { CommandContext } from '../context';

export function keysRoll(keys: Command, ctx: CommandContext): void {
  keys
    .command('roll')
    .description("replace an API key's token: a new key with its name, scopes and limits; the old token works for --expires-in more")
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--key <key-id>', 'the key')
    .option('--expires-in <seconds>', "the old token's overlap (default 86400)")
    .action(async (options: { workspace: string; key: string; expiresIn?: string }) => {
      const admin = await ctx.deps.admin();
      const path = { id: options.workspace, key_id: options.key };
      const body = (options.expiresIn === undefined ? {} : { expires_in_seconds: numberArg(options.expiresIn) }) as { expires_in_seconds?: number };
      const rolled = await unwrap(admin.POST('/workspaces/{id}/api-keys/{key_id}/roll', { params: { path }, body }));
      const old = await unwrap(admin.GET('/workspaces/{id}/api-keys/{key_id}', { params: { path } }));
      ctx.print({ ...rolled, rolled_from: { id: path.key_id, expires_at: old.expires_at } });
    });
}
