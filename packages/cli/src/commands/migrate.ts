import type { Command } from 'commander';
import type { CommandContext } from '../context';

export function migrate(program: Command, ctx: CommandContext): void {
  program
    .command('migrate')
    .description("apply the gateway's migrations (GATEWAY_DIRECT_DATABASE_URL when set, else GATEWAY_DATABASE_URL)")
    .action(async () => {
      ctx.print(await ctx.deps.migrate());
    });
}
