import type { Command } from 'commander';
import type { CommandContext } from '../context';

export function demoSeed(program: Command, ctx: CommandContext): void {
  program
    .command('demo-seed')
    .description('the "Demo" workspace (created once) and a fresh unrestricted API key for it, on the gateway\'s database')
    .action(async () => {
      // The gateway's domain code, and through the stores Prisma, load only for this command.
      const [{ demoSeed: seed }, stores] = await Promise.all([import('@platform/gateway/keys.service'), ctx.deps.stores()]);
      ctx.io.out(JSON.stringify(await seed(stores)));
    });
}
