import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import type { CommandContext } from '../context';

export function workspacesCreate(workspaces: Command, ctx: CommandContext): void {
  workspaces
    .command('create')
    .description('create a workspace')
    .option('--name <name>', "the workspace's name")
    .action(async (options: { name?: string }) => {
      const admin = await ctx.deps.admin();
      ctx.print(await unwrap(admin.POST('/workspaces', { body: { name: options.name } as { name: string } })));
    });
}
