import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import { listQuery } from '../args';
import type { CommandContext } from '../context';

export function keysList(keys: Command, ctx: CommandContext): void {
  keys
    .command('list')
    .description("list a workspace's API keys, revoked ones too (never a token)")
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--limit <n>', 'at most this many')
    .option('--cursor <cursor>', "the previous page's next_cursor")
    .action(async (options: { workspace: string; limit?: string; cursor?: string }) => {
      const admin = await ctx.deps.admin();
      ctx.print(await unwrap(admin.GET('/workspaces/{id}/api-keys', { params: { path: { id: options.workspace }, query: listQuery(options) } })));
    });
}
