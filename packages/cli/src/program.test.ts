import { EXIT, runCli } from './program';
import type { CliDeps } from './context';

/** Deps that record what the commands opened; the admin client records each call and answers 201. */
function recordingDeps() {
  const opened: string[] = [];
  const calls: { method: string; path: string; init: unknown }[] = [];
  const call = (method: string) => (path: string, init: unknown) => {
    calls.push({ method, path, init });
    return Promise.resolve({ data: { id: 'answer' }, error: undefined, response: new Response(null, { status: 201 }) });
  };
  const deps: CliDeps = {
    admin: () => {
      opened.push('admin');
      return Promise.resolve({ GET: call('GET'), POST: call('POST'), PATCH: call('PATCH') } as unknown as Awaited<ReturnType<CliDeps['admin']>>);
    },
    stores: () => {
      opened.push('stores');
      return Promise.reject(new Error('no database in a unit test'));
    },
    migrate: () => {
      opened.push('migrate');
      return Promise.reject(new Error('no database in a unit test'));
    },
  };
  return { deps, opened, calls };
}

async function run(...argv: string[]) {
  const { deps, opened, calls } = recordingDeps();
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, deps, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out: out.join('\n'), err: err.join('\n'), opened, calls };
}

test('--help lists every command group and opens nothing (no admin client, no database)', async () => {
  const help = await run('--help');
  expect(help.code).toBe(EXIT.ok);
  for (const command of ['workspaces', 'keys', 'quotas', 'migrate', 'demo-seed']) expect(help.out).toContain(command);
  expect(help.opened).toEqual([]);
  const keys = await run('keys', '--help');
  for (const command of ['create', 'list', 'update', 'roll', 'usage', 'revoke']) expect(keys.out).toContain(command);
  expect(keys.opened).toEqual([]);
});

test('a usage error exits 2, says where the usage is, and opens nothing', async () => {
  for (const argv of [[], ['keys', 'explode'], ['workspaces', 'create', '--colour', 'red'], ['keys', 'revoke', '--workspace', 'w']]) {
    const answer = await run(...argv);
    expect(answer.code).toBe(EXIT.usage);
    expect(answer.opened).toEqual([]);
  }
  expect((await run('keys', 'explode')).err).toContain('--help');
});

test('keys create sends what it was given: scopes as a list, rate limits as numbers where they are whole numbers', async () => {
  const answer = await run(
    'keys',
    'create',
    '--workspace',
    'w1',
    '--name',
    'gate',
    '--scopes',
    'tickets:write, events:read',
    '--rate-limits',
    'events=50,pipelines=lots',
  );
  expect(answer.code).toBe(EXIT.ok);
  expect(answer.opened).toEqual(['admin']);
  expect(answer.calls).toEqual([
    {
      method: 'POST',
      path: '/workspaces/{id}/api-keys',
      init: {
        params: { path: { id: 'w1' } },
        body: { name: 'gate', scopes: ['tickets:write', 'events:read'], rate_limits: { events: 50, pipelines: 'lots' } },
      },
    },
  ]);
  expect(JSON.parse(answer.out)).toEqual({ id: 'answer' });
});
