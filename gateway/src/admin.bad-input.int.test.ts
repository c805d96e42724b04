import { BAD_ESCAPES, BAD_STRINGS, BAD_TIMESTAMPS, FORGED_CURSORS, runBadInput, type BadInputRequest } from '@platform/testing';
import { ADMIN_TOKEN, httpClient, startGateway, type HttpClient, type TestGateway } from './test/gateway';

let gw: TestGateway;
let client: HttpClient;

beforeAll(async () => {
  gw = await startGateway();
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await gw.close();
});

const admin = (method: string, path: string, body?: unknown) => client.call(gw.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body });

/** The admin API's routes with bad names, keys, timestamps, escapes and cursors, judged like the services' route walk. */
function adminRequests(workspaceId: string): BadInputRequest[] {
  const out: BadInputRequest[] = [];
  const add = (route: string, method: string, path: string, label: string, refuse?: BadInputRequest['refuse'], body?: unknown) =>
    out.push({ route, method, path, label: `${route}: ${label}`, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(refuse ? { refuse } : {}) });
  for (const [what, bad] of Object.entries(BAD_STRINGS)) {
    add('POST /workspaces', 'POST', '/workspaces', `${what} in name`, { in: 'body', field: 'name' }, { name: bad });
    add('POST /workspaces/:id/api-keys', 'POST', `/workspaces/${workspaceId}/api-keys`, `${what} in name`, { in: 'body', field: 'name' }, { name: bad });
    add('POST /workspaces/:id/api-keys', 'POST', `/workspaces/${workspaceId}/api-keys`, `${what} in scopes`, { in: 'body', field: 'scopes.0' }, { name: 'k', scopes: [bad] });
    add('POST /workspaces/:id/api-keys', 'POST', `/workspaces/${workspaceId}/api-keys`, `${what} in expires_at`, { in: 'body', field: 'expires_at' }, { name: 'k', expires_at: `2030-01-01T00:00:00Z${bad}` });
    add('POST /workspaces', 'POST', '/workspaces', `${what} in an unknown key`, { in: 'body' }, { name: 'ok', [`x${bad}`]: 1 });
  }
  for (const at of BAD_TIMESTAMPS) {
    add('POST /workspaces/:id/api-keys', 'POST', `/workspaces/${workspaceId}/api-keys`, `expires_at ${at}`, { in: 'body', field: 'expires_at' }, { name: 'k', expires_at: at });
  }
  for (const escape of BAD_ESCAPES) {
    add('GET /workspaces/:id', 'GET', `/workspaces/${escape}`, `path id ${escape}`, { in: 'path', field: 'id' });
    add('DELETE /workspaces/:id/api-keys/:key_id', 'DELETE', `/workspaces/${workspaceId}/api-keys/${escape}`, `path key_id ${escape}`, { in: 'path', field: 'key_id' });
    add('GET /workspaces', 'GET', `/workspaces?cursor=${escape}`, `query cursor ${escape}`, { in: 'query', field: 'cursor' });
    add('GET /workspaces/:id/api-keys', 'GET', `/workspaces/${workspaceId}/api-keys?limit=${escape}`, `query limit ${escape}`, { in: 'query', field: 'limit' });
  }
  for (const [what, cursor] of Object.entries(FORGED_CURSORS)) {
    add('GET /workspaces', 'GET', `/workspaces?cursor=${cursor}`, `forged cursor (${what})`, { in: 'query', field: 'cursor' });
    add('GET /workspaces/:id/api-keys', 'GET', `/workspaces/${workspaceId}/api-keys?cursor=${cursor}`, `forged cursor (${what})`, { in: 'query', field: 'cursor' });
  }
  add('POST /workspaces', 'POST', '/workspaces', 'a name of 100,000 characters', undefined, { name: 'é'.repeat(100_000) });
  return out;
}

test('the admin API refuses bad strings, timestamps, escapes and cursors with a contract 400, never a 5xx', async () => {
  const workspace = await admin('POST', '/workspaces', { name: 'Acme' });
  expect(workspace.status).toBe(201);
  const failures = await runBadInput(adminRequests(workspace.body.id), (r) => admin(r.method, r.path, r.body));
  expect(failures).toEqual([]);
  const keys = await admin('GET', `/workspaces/${workspace.body.id}/api-keys`);
  expect(keys.body.data).toEqual([]);
});
