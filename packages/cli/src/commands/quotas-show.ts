import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import type { CommandContext } from '../context';

export function quotasShow(quotas: Command, ctx: CommandContext): void {
  quotas
    .command('show')
    .description("a workspace's quotas: its own values, the limits in force and its usage")
    .requiredOption('--workspace <id>', 'the workspace')
    .action(async (options: { workspace: string }) => {
      const admin = await ctx.deps.admin();
      ctx.print(await unwrap(admin.GET('/workspaces/{id}/quotas', { params: { path: { id: options.workspace } } })));
    });
}
