import { Option, type Command } from 'commander';
import { unwrap } from '@platform/client';
import { QUOTA_NAMES } from '@platform/contract';
import { numberArg } from '../args';
import type { CommandContext } from '../context';

export function quotasSet(quotas: Command, ctx: CommandContext): void {
  // One option per quota: `scheduled_pipelines` → `--scheduled-pipelines`.
  const quotaOptions = QUOTA_NAMES.map((name) => ({ name, option: new Option(`--${name.replaceAll('_', '-')} <n|default>`, `the ${name} quota`) }));
  const set = quotas
    .command('set')
    .description("change a workspace's quotas (the options given): a number, or default for the platform's")
    .requiredOption('--workspace <id>', 'the workspace');
  for (const { option } of quotaOptions) set.addOption(option);
  set.action(async (options: Record<string, string | undefined> & { workspace: string }, command: Command) => {
    // `default` is null (the platform default); a number is sent as such, anything else as text for the API to name.
    const body: Record<string, unknown> = {};
    for (const { name, option } of quotaOptions) {
      const value = options[option.attributeName()];
      if (value !== undefined) body[name] = value === 'default' ? null : numberArg(value);
    }
    if (Object.keys(body).length === 0) {
      command.error(`nothing to change: give ${quotaOptions.map(({ option }) => option.long).join(', ')} (a number or default)`);
    }
    const admin = await ctx.deps.admin();
    ctx.print(await unwrap(admin.PATCH('/workspaces/{id}/quotas', { params: { path: { id: options.workspace } }, body })));
  });
}
