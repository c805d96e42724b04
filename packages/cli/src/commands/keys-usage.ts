import type { Command } from 'commander';
import { unwrap } from '@platform/client';
import type { CommandContext } from '../context';

export function keysUsage(keys: Command, ctx: CommandContext): void {
  keys
    .command('usage')
    .description("an API key's requests per UTC hour or day, by status class (default: the last 24 hours by hour)")
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--key <key-id>', 'the key')
    .option('--from <RFC3339>', 'the first hour or day')
    .option('--to <RFC3339>', 'the end (excluded)')
    .option('--granularity <hour|day>', 'hour or day')
    .action(async (options: { workspace: string; key: string; from?: string; to?: string; granularity?: string }) => {
      const admin = await ctx.deps.admin();
      const path = { id: options.workspace, key_id: options.key };
      const query = { from: options.from, to: options.to, granularity: options.granularity } as { granularity?: 'hour' | 'day' };
      ctx.print(await unwrap(admin.GET('/workspaces/{id}/api-keys/{key_id}/usage', { params: { path, query } })));
    });
}
