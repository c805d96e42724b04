import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

// The curl lines `npm start` (and `npm run fleet`) print under "Platform running", pasted into a
// shell as a newcomer would: they must work as printed, against the started platform.
const gatewayUrl = process.env.E2E_GATEWAY_URL!;
const adminToken = process.env.E2E_ADMIN_TOKEN!;
const run = promisify(execFile);

async function admin(path: string, body: unknown): Promise<any> {
  const res = await fetch(`${gatewayUrl}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return res.json();
}

/** Each pasteable block of the banner: its indented lines, up to the next line that is not. */
function blocks(lines: string[]): { title: string; script: string }[] {
  const out: { title: string; script: string }[] = [];
  let title = '';
  for (const line of lines) {
    if (line.startsWith('  ')) {
      const last = out.at(-1);
      if (last && last.title === title) last.script += `\n${line}`;
      else out.push({ title, script: line });
    } else if (line.trim()) {
      title = line;
    }
  }
  return out;
}

let printed: string[];
let token: string;

beforeAll(async () => {
  const workspace = await admin('/workspaces', { name: 'banner lines' });
  token = (await admin(`/workspaces/${workspace.id}/api-keys`, { name: 'banner' })).token;
  const { stdout } = await run(process.execPath, [join(__dirname, '..', '..', 'scripts', 'platform.mjs'), 'demo-lines'], {
    env: { ...process.env, PLATFORM_URL: gatewayUrl, PLATFORM_API_KEY: token },
  });
  printed = stdout.split('\n');
});

describe('the start banner’s curl lines (scripts/platform.mjs)', () => {
  test('are printed for the demo ticket and the demo pipeline, with absolute URLs and quoted headers', () => {
    expect(printed.filter((line) => line.startsWith('(could not'))).toEqual([]);
    const found = blocks(printed);
    expect(found.map((b) => b.title)).toEqual([
      expect.stringMatching(/^Validate the demo ticket/),
      expect.stringMatching(/^Trigger a run of the demo pipeline/),
    ]);
    for (const { script } of found) {
      for (const [, url] of script.matchAll(/\bcurl\b[^\n]*?\s(\S*\/(?:events|pipelines)\/v\d\S*)/g)) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
      for (const [, header] of script.matchAll(/-H\s+(\S)/g)) expect(['"', "'"]).toContain(header);
    }
  });

  test('validating the demo ticket works as pasted: 200 validated, and a second paste is the 409 the banner announces', async () => {
    const [validate] = blocks(printed);
    const paste = async () => {
      const { stdout } = await run('bash', ['-c', `${validate!.script} -s -w '\n%{http_code}'`]);
      const lines = stdout.trimEnd().split('\n');
      const status = Number(lines.pop());
      return { status, body: JSON.parse(lines.join('\n')) };
    };
    const first = await paste();
    expect(first).toEqual({ status: 200, body: expect.objectContaining({ status: 'validated', gate: 'main-entrance' }) });
    expect((await paste()).status).toBe(409);
  });

  test('triggering a run works as pasted: Location is a path on the gateway, and the printed next command reads the run there', async () => {
    const [, trigger] = blocks(printed);
    // The block as printed, then what the newcomer sees: the Location it kept and the run it read.
    const { stdout } = await run('bash', ['-c', `set -e\n${trigger!.script}\nprintf '\\n%s\\n' "$run"`]);
    const lines = stdout.trimEnd().split('\n');
    const location = lines.pop()!;
    expect(location).toMatch(/^\/pipelines\/v3\/pipelines\/[0-9a-f-]{36}\/runs\/[0-9a-f-]{36}$/);
    expect(trigger!.script).toContain(`curl ${gatewayUrl}$run`);
    const body = JSON.parse(lines.join('\n'));
    expect(body).toEqual(expect.objectContaining({ id: location.split('/').at(-1), trigger: 'manual' }));
  });
});
