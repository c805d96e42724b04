import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import { listQuery } from '../args';
import type { CommandContext } from '../context';

export function workspacesList(workspaces: Command, ctx: CommandContext): void {
  workspaces
    .command('list')
    .description('list the workspaces, oldest first')
    .option('--limit <n>', 'at most this many')
    .option('--cursor <cursor>', "the previous page's next_cursor")
    .action(async (options: { limit?: string; cursor?: string }) => {
      const admin = await ctx.deps.admin();
      ctx.print(await unwrap(admin.GET('/workspaces', { params: { query: listQuery(options) } })));
    });
}
