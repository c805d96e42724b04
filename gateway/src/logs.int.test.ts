import { randomUUID } from 'node:crypto';
import { killSpawned, waitFor } from '@platform/testing';
import { DEAD_URL, startEchoUpstream, type EchoUpstream } from './test/gateway';
import { spawnGateway, type GatewayProcess } from './test/processes';

// Contract section 12: JSON logs, one line per request (method, route, status, duration, request id,
// workspace id), never a token. Read from the real process's stdout (node dist/main.js).

let upstream: EchoUpstream;
let gateway: GatewayProcess;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  // Warehouse is unreachable: its requests take the logged "upstream unavailable" path.
  gateway = await spawnGateway({ events: upstream.url, warehouse: DEAD_URL, pipelines: upstream.url });
});
afterAll(async () => {
  await killSpawned();
  await upstream.close();
});

interface LogLine {
  msg: string;
  level: number;
  method?: string;
  route?: string;
  status?: number;
  duration_ms?: number;
  request_id?: string;
  workspace_id?: string;
}

test('no API key or admin token ever reaches the logs, whatever the request and its outcome', async () => {
  const workspace = await gateway.admin('POST', '/workspaces', { name: 'logs' });
  expect(workspace.status).toBe(201);
  const key = await gateway.admin('POST', `/workspaces/${workspace.body.id}/api-keys`, { name: 'logged?' });
  expect(key.status).toBe(201);
  const token = key.body.token as string;
  const other = await gateway.admin('POST', `/workspaces/${workspace.body.id}/api-keys`, { name: 'revoked' });
  const wrongToken = `${token.slice(0, -4)}AAAA`;

  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: object) => {
    const res = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body && JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  };
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const requestId = randomUUID();
  expect(await call('GET', `/events/v0/events/${randomUUID()}`, { ...bearer(token), 'x-request-id': requestId })).toBe(200);
  expect(await call('POST', `/events/v0/tickets/${randomUUID()}/validate`, { ...bearer(token), 'idempotency-key': randomUUID() }, {})).toBe(200);
  // A token in the query string: the log line names the route pattern, not the URL.
  expect(await call('GET', `/events/v0/events/${randomUUID()}?access_token=${token}`, bearer(token))).toBe(200);
  expect(await call('GET', `/warehouse/v1/items/${randomUUID()}`, bearer(token))).toBe(503);
  expect(await call('GET', '/events/v0/events', bearer(wrongToken))).toBe(401);
  expect(await call('GET', '/events/v0/events', { authorization: `Basic ${Buffer.from(`user:${token}`).toString('base64')}` })).toBe(401);
  expect(await call('GET', '/admin/v1/workspaces', bearer(token))).toBe(401);
  expect(await call('GET', '/admin/v1/workspaces', bearer(`${gateway.adminToken}x`))).toBe(401);
  expect(await call('DELETE', `/admin/v1/workspaces/${workspace.body.id}/api-keys/${other.body.id}`, bearer(gateway.adminToken))).toBe(204);
  expect(await call('GET', '/events/v0/events', bearer(other.body.token))).toBe(401);

  // Lines are written in order as requests finish: once a later request's line is out, every line above is.
  const marker = randomUUID();
  expect(await call('GET', `/events/v0/events/${randomUUID()}`, { ...bearer(token), 'x-request-id': marker })).toBe(200);
  await waitFor('the marker request’s log line', () => gateway.proc.output().includes(marker));
  const output = gateway.proc.output();
  for (const secret of [
    token,
    wrongToken,
    other.body.token as string,
    gateway.adminToken,
    `${gateway.adminToken}x`,
    Buffer.from(`user:${token}`).toString('base64'),
  ]) {
    expect(output.includes(secret)).toBe(false);
    // Not even most of it (a token cut short is still a leak).
    expect(output.includes(secret.slice(0, 20))).toBe(false);
  }
  expect(output.toLowerCase()).not.toContain('authorization');

  const lines = output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LogLine);
  const hotPath = lines.filter((l) => l.msg === 'request' && l.route?.startsWith('events '));
  expect(hotPath.length).toBeGreaterThanOrEqual(3);
  expect(lines.find((l) => l.msg === 'request' && l.request_id === requestId)).toEqual(
    expect.objectContaining({ method: 'GET', route: 'events GET /events/:id', status: 200, duration_ms: expect.any(Number), workspace_id: workspace.body.id }),
  );
  expect(lines.some((l) => l.msg === 'upstream unavailable' && l.level === 40)).toBe(true);
});
