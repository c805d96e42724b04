import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SCOPES } from '@platform/contract';
import { waitFor } from '@platform/testing';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { openBrowser, screenshot, WAIT_MS, type BrowserSession } from './browser';
import { ARTIFACTS_DIR } from './platform';

// One browser session walks through the console as a user would; the steps share the page.
const gatewayUrl = process.env.E2E_GATEWAY_URL!;
const adminToken = process.env.E2E_ADMIN_TOKEN!;
const RUN_WAIT_MS = 60_000;
/** The gateway writes the usage it counted every GATEWAY_USAGE_FLUSH_MS (5 s by default, less in e2e/src/platform.ts). */
const USAGE_WAIT_MS = 60_000;

let browser: BrowserSession;
let context: BrowserContext;
let page: Page;

const workspaceName = `e2e ${randomUUID().slice(0, 8)}`;
let workspaceId: string;
let listedPipelineId: string;

interface Reply {
  status: number;
  body: any;
}

async function api(token: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'platform-version': '2024-12-01', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const adminApi = (method: string, path: string, body?: unknown) => api(adminToken, method, `/admin/v1${path}`, body);

/** The id of the workspace named `name`, through every page of the admin list. */
async function findWorkspaceId(name: string): Promise<string> {
  let cursor: string | null = null;
  do {
    const listed: Reply = await adminApi('GET', `/workspaces?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    const found = listed.body.data.find((w: { name: string }) => w.name === name);
    if (found) return found.id;
    cursor = listed.body.next_cursor;
  } while (cursor);
  throw new Error(`workspace ${name} not found`);
}

/** Polls `check` (expectations inside it) until it passes; past `timeoutMs` its last failure is in the error. */
const eventually = (check: () => Promise<unknown>, timeoutMs = WAIT_MS) =>
  waitFor(
    'the expectations to hold',
    async () => {
      await check();
      return true;
    },
    timeoutMs,
    100,
  );

const statusText = () => page.getByRole('status').textContent();

/** The key a gate scanner would use, and the tickets of the event the console opens. */
let scannerToken: string;
const eventsApi = (method: string, path: string, body?: unknown) => api(scannerToken, method, `/events/v0${path}`, body);
const tickets: Record<'ada' | 'grace' | 'alan', string> = { ada: '', grace: '', alan: '' };
/** GET /events/{id}/stats requests the page sent. */
let statsRequests = 0;
/** The console reads an open event again every 2 s (REFRESH_MS in events.view.ts). */
const EVENTS_REFRESH_MS = 2_000;
/** Two refresh periods on the page's own clock, however slow the machine: a read due meanwhile has been asked for. */
const twoRefreshPeriodsInThePage = () => page.evaluate((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)), 2 * EVENTS_REFRESH_MS);

/** An open event's figures by name (`total`, `issued`, `validated`, `rejected-duplicates`), without `as-of`. */
async function figures(event: Locator): Promise<Record<string, string>> {
  const pairs = await event.locator('dd[data-figure]').evaluateAll((dds) => dds.map((dd) => [(dd as HTMLElement).dataset.figure!, dd.textContent]));
  return Object.fromEntries(pairs.filter(([name]) => name !== 'as-of'));
}

/** The rows of the figures per gate: [gate, validated]. */
const gateFigures = (event: Locator): Promise<string[][]> =>
  event.locator('tr[data-gate]').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)));

/** A table's rows as { column label: text } (the cells name their column for phones). */
const rowsOf = (table: Locator): Promise<Record<string, string>[]> =>
  table
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => Object.fromEntries([...row.querySelectorAll<HTMLElement>('td[data-label]')].map((td) => [td.dataset.label!, td.textContent]))),
    );

/** The keys made for the edit, roll and usage steps: the edited one and the key its roll made. */
const limitedKey = { id: '', token: '' };
const rolledKey = { id: '', token: '' };
/** Every status answered to a request with a token, so its usage can be checked against what was sent. */
const answered = new Map<string, number[]>();

/** A request with a key's token to the events service; its status and the X-RateLimit-Limit it carried. */
async function withKey(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; limit: string | null }> {
  const res = await fetch(`${gatewayUrl}/events/v0${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'platform-version': '2024-12-01', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  answered.set(token, [...(answered.get(token) ?? []), res.status]);
  return { status: res.status, limit: res.headers.get('x-ratelimit-limit') };
}

/** The usage API's status classes, in its order. */
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '429', '5xx'];

/** Requests per status class as the usage API counts them ("4xx" without 429). */
function countByStatus(statuses: number[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(STATUS_CLASSES.map((status) => [status, 0]));
  for (const status of statuses) counts[status === 429 ? '429' : `${Math.floor(status / 100)}xx`]!++;
  return counts;
}

const keyRowOf = (id: string): Locator => page.locator(`#keys-table tbody tr[data-key-id="${id}"]`);
const keyCell = (id: string, column: string) => keyRowOf(id).locator(`td[data-label="${column}"]`).textContent();
const listedKey = async (id: string) => (await adminApi('GET', `/workspaces/${workspaceId}/api-keys`)).body.data.find((k: { id: string }) => k.id === id);

beforeAll(async () => {
  browser = await openBrowser(gatewayUrl);
  context = browser.context;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gatewayUrl });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
});

describe('workspace console in Chromium', () => {
  test('serves the page with a strict CSP and signs in with the admin token, kept out of storage, cookies and the URL', async () => {
    const response = await page.goto(`${gatewayUrl}/console`);
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['x-content-type-options']).toBe('nosniff');

    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The admin token was not accepted.' }).waitFor();

    await page.getByLabel('Admin token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();

    expect(await page.getByLabel('Admin token').inputValue()).toBe('');
    expect(await page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie }))).toEqual({
      local: 0,
      session: 0,
      cookie: '',
    });
    expect(await context.cookies()).toEqual([]);
    // The address names the view (the workspace list), never a secret.
    expect(page.url()).toBe(`${gatewayUrl}/console#/workspaces`);
    expect(await page.content()).not.toContain(adminToken);
  });

  test('creates a workspace and opens it with a one-hour console session key (events read, tickets, items, stock, pipelines, runs, webhooks)', async () => {
    // Lists first: the create form opens from its button.
    expect(await page.getByLabel('New workspace name').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'New workspace' }).click();
    await page.getByLabel('New workspace name').fill(workspaceName);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('tab', { name: 'API keys', selected: true }).waitFor();
    expect(await page.locator('#session-workspace-name').textContent()).toBe(workspaceName);

    workspaceId = await findWorkspaceId(workspaceName);

    const keys = (await adminApi('GET', `/workspaces/${workspaceId}/api-keys`)).body.data;
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({
      name: 'console session',
      // Every scope the console works with, in the contract's order: all of them but creating events.
      scopes: SCOPES.filter((scope) => scope !== 'events:write'),
      revoked_at: null,
    });
    const ttl = Date.parse(keys[0].expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(55 * 60_000);
    expect(ttl).toBeLessThanOrEqual(60 * 60_000);
    await page
      .getByRole('row', { name: /console session/ })
      .getByText('this console')
      .waitFor();
  });

  test('creates a key with chosen scopes; its token, shown once and copied, works until it is revoked in the page', async () => {
    expect(await page.getByLabel('Key name').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('Key name').fill('e2e pipelines key');
    await page.getByLabel('pipelines:read', { exact: true }).check();
    await page.getByLabel('pipelines:write', { exact: true }).check();
    await page.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    await page.getByRole('button', { name: 'Create key' }).click();

    const tokenField = page.getByLabel('New token', { exact: true });
    await tokenField.waitFor();
    const token = await tokenField.inputValue();
    expect(token).toMatch(/^plk_[0-9A-Za-z]{32,}$/);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await eventually(async () => expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token));
    await eventually(async () => expect(await statusText()).toContain('Token copied'));
    const row = page.getByRole('row', { name: /e2e pipelines key/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('pipelines:read, pipelines:write');
    await screenshot(page, 'console-keys.png');

    // The token works on the public API with exactly the chosen scopes.
    const created = await api(token, 'POST', '/pipelines/v3/pipelines', {
      name: 'e2e listed',
      source: { connector: 'sample', config: { records: 5 } },
      destination: { connector: 'postgres', config: { table: 'e2e_opened_records' } },
    });
    expect(created.status).toBe(201);
    listedPipelineId = created.body.id;
    expect((await api(token, 'GET', `/pipelines/v3/pipelines/${listedPipelineId}`)).status).toBe(200);
    const forbidden = await api(token, 'GET', `/pipelines/v3/pipelines/${listedPipelineId}/runs`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.required_scope).toBe('runs:read');

    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByLabel('New token', { exact: true }).isHidden()).toBe(true);
    expect(await page.content()).not.toContain(token);

    await row.getByRole('button', { name: /^Revoke e2e pipelines key/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “e2e pipelines key”?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    expect(await row.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);

    // Contract section 3: a revoked key gets 401 (within a second: a speed, measured in bench/, not here).
    await eventually(async () => expect((await api(token, 'GET', `/pipelines/v3/pipelines/${listedPipelineId}`)).status).toBe(401));
  });

  test('an open key with no traffic says so; editing its name, scopes and rate limits updates its row, the admin API and the limit its requests get', async () => {
    const created = await adminApi('POST', `/workspaces/${workspaceId}/api-keys`, { name: 'e2e limited key', scopes: ['events:read'] });
    expect(created.status).toBe(201);
    Object.assign(limitedKey, { id: created.body.id, token: created.body.token });
    await page.getByRole('button', { name: 'Refresh keys' }).click();
    await keyRowOf(limitedKey.id).waitFor();
    expect(await keyCell(limitedKey.id, 'Limits')).toBe('default');

    await keyRowOf(limitedKey.id)
      .getByRole('button', { name: /^Open key e2e limited key/ })
      .click();
    const key = page.getByRole('region', { name: 'Key “e2e limited key”' });
    await key.getByText('No requests in the last 24 hours').waitFor();
    expect(await key.locator('canvas').count()).toBe(0);

    const editor = key.getByRole('form', { name: 'Edit the key' });
    expect(await editor.getByLabel('events:read', { exact: true }).isChecked()).toBe(true);
    await editor.getByLabel('Name', { exact: true }).fill('e2e edited key');
    await editor.getByLabel('tickets:read', { exact: true }).check();
    // Empty fields show the platform's limits (meta.json, from core) and keep them.
    const eventsLimit = editor.getByLabel('events per minute');
    expect(await eventsLimit.getAttribute('placeholder')).toBe('400');
    expect(await editor.getByLabel('warehouse-bulk per minute').getAttribute('placeholder')).toBe('60');
    await eventsLimit.fill('5');
    await editor.getByRole('button', { name: 'Save changes' }).click();

    await eventually(async () => expect(await keyCell(limitedKey.id, 'Limits')).toBe('events 5/min'));
    expect(await keyCell(limitedKey.id, 'Name')).toBe('e2e edited key');
    expect(await keyCell(limitedKey.id, 'Scopes')).toBe('events:read, tickets:read');
    await page.getByRole('region', { name: 'Key “e2e edited key”' }).waitFor();
    expect(await listedKey(limitedKey.id)).toMatchObject({ name: 'e2e edited key', scopes: ['events:read', 'tickets:read'], rate_limits: { events: 5 } });

    // Contract section 16: every gateway applies the change (within a second: bench/'s to measure); X-RateLimit-Limit shows the key's own limit.
    await eventually(async () => expect((await withKey(limitedKey.token, 'GET', '/events')).limit).toBe('5'));
    expect(answered.get(limitedKey.token)!.at(-1)).toBe(200);
  });

  test('rolling the key: the overlap chosen, confirmed; the new token is shown once and works, the old key’s row shows its new expiry', async () => {
    const key = page.getByRole('region', { name: 'Key “e2e edited key”' });
    const roller = key.getByRole('form', { name: 'Roll the key' });
    expect(await roller.getByLabel('The old token keeps working').inputValue()).toBe('86400');
    await roller.getByLabel('The old token keeps working').selectOption({ label: 'For 1 hour' });
    const before = Date.now();
    await roller.getByRole('button', { name: 'Roll key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll “e2e edited key”?' });
    await dialog.getByText('keeps working for 1 hour').waitFor();
    await dialog.getByRole('button', { name: 'Roll key' }).click();

    const tokenField = page.getByLabel('New token', { exact: true });
    await eventually(async () => expect(await tokenField.inputValue()).toMatch(/^plk_[0-9A-Za-z]{32,}$/));
    const after = Date.now();
    rolledKey.token = await tokenField.inputValue();
    expect(rolledKey.token).not.toBe(limitedKey.token);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await eventually(async () => expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rolledKey.token));

    // The new key: same name, scopes and limits, no expiry. The old one: expires an hour after the roll.
    const keys = (await adminApi('GET', `/workspaces/${workspaceId}/api-keys`)).body.data;
    const rolled = keys.find((k: { id: string; name: string }) => k.name === 'e2e edited key' && k.id !== limitedKey.id);
    expect(rolled).toMatchObject({ scopes: ['events:read', 'tickets:read'], rate_limits: { events: 5 }, expires_at: null, revoked_at: null });
    rolledKey.id = rolled.id;
    const old = keys.find((k: { id: string }) => k.id === limitedKey.id);
    expect(Date.parse(old.expires_at)).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(Date.parse(old.expires_at)).toBeLessThanOrEqual(after + 3_600_000 + 1_000);
    await eventually(async () => expect(await keyRowOf(limitedKey.id).locator('td[data-label="Expires"] time').getAttribute('datetime')).toBe(old.expires_at));
    expect(await keyCell(rolledKey.id, 'Expires')).toBe('never');
    expect(await keyCell(rolledKey.id, 'Limits')).toBe('events 5/min');
    // The open key is the old one, shown as it is now.
    await eventually(async () => expect(await key.locator('dd[data-fact="Expires"] time').getAttribute('datetime')).toBe(old.expires_at));

    // Both tokens work until the old one expires; the new one has the key's limits.
    expect(await withKey(rolledKey.token, 'GET', '/events')).toEqual({ status: 200, limit: '5' });
    expect((await withKey(limitedKey.token, 'GET', '/events')).status).toBe(200);
    await screenshot(page, 'console-key-rolled.png');

    // Shown once: gone from the page when stored.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(rolledKey.token);

    // Revoked meanwhile (elsewhere): the page's roll is refused with the API's message, and the key shows as revoked.
    expect((await adminApi('DELETE', `/workspaces/${workspaceId}/api-keys/${limitedKey.id}`)).status).toBe(204);
    const refused = await adminApi('POST', `/workspaces/${workspaceId}/api-keys/${limitedKey.id}/roll`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    await roller.getByRole('button', { name: 'Roll key' }).click();
    await dialog.getByRole('button', { name: 'Roll key' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `Could not roll the key: ${refused.body.error.message}` })
      .waitFor();
    await key.getByText('A revoked key can no longer be edited or rolled.').waitFor();
    expect(await tokenField.isHidden()).toBe(true);
  });

  test("a key's usage chart: uPlot draws its requests per hour by status class; its table of numbers matches the admin usage API", async () => {
    // 2xx, a 404 and a 403 (no events:write), then past the key's 5 a minute: 429.
    await withKey(rolledKey.token, 'GET', '/events');
    await withKey(rolledKey.token, 'GET', `/events/${randomUUID()}`);
    await withKey(rolledKey.token, 'POST', '/events', { name: 'not allowed', starts_at: new Date().toISOString() });
    for (let i = 0; i < 4; i++) await withKey(rolledKey.token, 'GET', '/events');
    const sent = countByStatus(answered.get(rolledKey.token)!);
    expect(sent['2xx']).toBeGreaterThan(0);
    expect(sent['4xx']).toBe(2);
    expect(sent['429']).toBeGreaterThan(0);

    // The gateway counts in memory and writes every few seconds.
    const usagePath = `/workspaces/${workspaceId}/api-keys/${rolledKey.id}/usage`;
    let usage: { start: string; requests: number; by_status: Record<string, number> }[] = [];
    await eventually(async () => {
      usage = (await adminApi('GET', usagePath)).body.data;
      const total = countByStatus([]);
      for (const hour of usage) for (const [status, count] of Object.entries(hour.by_status)) total[status]! += count;
      expect(total).toEqual(sent);
    }, USAGE_WAIT_MS);

    await keyRowOf(rolledKey.id)
      .getByRole('button', { name: /^Open key/ })
      .click();
    const key = page.getByRole('region', { name: 'Key “e2e edited key”' });
    const total = Object.values(sent).reduce((a, b) => a + b, 0);
    const described = `${total} requests in the last 24 hours: ${STATUS_CLASSES.filter((status) => sent[status]! > 0)
      .map((status) => `${sent[status]} ${status}`)
      .join(', ')}`;
    await key.getByText(described).waitFor();

    // Drawn by uPlot, fetched from the gateway itself on first use.
    await key.locator('.usage-chart .uplot canvas').first().waitFor();
    expect(await key.locator('.usage-chart').getAttribute('aria-label')).toContain(described);
    expect(await page.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name))).toContain(`${gatewayUrl}/console/uPlot.esm.js`);

    // The text alternative: a row per hour with traffic, the API's numbers.
    await key.getByText('Requests per hour').click();
    const table = key.getByRole('table', { name: 'Requests per hour' });
    const rows = await table
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.querySelector('time')!.getAttribute('datetime'),
          ...[...tr.querySelectorAll<HTMLElement>('td[data-label]')].slice(1).map((td) => td.textContent),
        ]),
      );
    expect(rows).toEqual(usage.map((hour) => [hour.start, String(hour.requests), ...STATUS_CLASSES.map((s) => String(hour.by_status[s]))]));
    await screenshot(page, 'console-key-usage.png');

    // Unrestricted access and every limit field emptied: scopes null and rate_limits null (the platform's limits).
    const editor = key.getByRole('form', { name: 'Edit the key' });
    await editor.getByLabel('Unrestricted', { exact: false }).check();
    expect(await editor.getByLabel('tickets:read', { exact: true }).isDisabled()).toBe(true);
    await editor.getByLabel('events per minute').fill('');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await eventually(async () => expect(await keyCell(rolledKey.id, 'Limits')).toBe('default'));
    expect(await keyCell(rolledKey.id, 'Scopes')).toBe('all (unrestricted)');
    expect(await listedKey(rolledKey.id)).toMatchObject({ scopes: null, rate_limits: null });
  });

  test("lists the workspace's pipelines, creates a sample pipeline, pauses and resumes it, watches a run reach succeeded and reads its log", async () => {
    await page.getByRole('tab', { name: 'Pipelines' }).click();
    // Created through the API with another key: listed (GET /pipelines), not opened by hand.
    const listed = page.getByRole('article', { name: 'e2e listed' });
    await listed.waitFor();
    expect(await listed.locator('dd[data-fact="Id"]').textContent()).toBe(listedPipelineId);
    expect(await listed.locator('dd[data-fact="Schedule"]').textContent()).toBe('none (runs only when triggered)');

    expect(await page.getByLabel('Pipeline name').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'New pipeline' }).click();
    await page.getByLabel('Pipeline name').fill('e2e sample');
    await page.getByLabel('Source connector').selectOption('sample');
    await page.getByLabel('Records', { exact: true }).fill('250');
    await page.getByLabel('Seed (optional)').fill('7');
    await page.getByLabel('Destination table (postgres)').fill('e2e_console_records');
    await page.getByRole('button', { name: 'Create pipeline' }).click();
    const card = page.getByRole('article', { name: 'e2e sample' });
    await card.waitFor();
    await card.getByText('active', { exact: true }).waitFor();

    await card.getByRole('button', { name: 'Pause' }).click();
    await card.getByText('paused', { exact: true }).waitFor();
    await card.getByRole('button', { name: 'Trigger run' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /paused/i })
      .waitFor();
    await card.getByRole('button', { name: 'Resume' }).click();
    await card.getByText('active', { exact: true }).waitFor();

    await card.getByRole('button', { name: 'Trigger run' }).click();
    const run = card.locator('tbody tr').first();
    await run.waitFor();
    const succeeded = card.locator('tbody tr[data-status="succeeded"]');
    await succeeded.waitFor({ timeout: RUN_WAIT_MS });
    const cells = await succeeded.first().getByRole('cell').allTextContents();
    expect(cells).toEqual(expect.arrayContaining(['manual', '250', '1']));
    expect(cells.filter((c) => c === '250')).toHaveLength(2); // records read and written
    await eventually(async () => expect(await statusText()).toMatch(/succeeded \(250 read, 250 written\)/));
    // The pipeline's last successful run is filled in once the run ends.
    await eventually(async () => expect(await card.locator('dd[data-fact="Last successful run"]').textContent()).not.toBe('none yet'));

    // The run's log, oldest first: queued with its trigger, the attempt's steps, the end with the stats.
    await succeeded
      .first()
      .getByRole('button', { name: /^Show the log of run/ })
      .click();
    const log = card.getByRole('region', { name: /^Log of run/ });
    await log.getByRole('row').filter({ hasText: 'status: succeeded' }).waitFor();
    const lines = await log.locator('tbody tr').allTextContents();
    expect(lines[0]).toContain('trigger: manual');
    expect(lines.at(-1)).toContain('records_read: 250, records_written: 250');
    expect(lines.some((line) => line.includes('attempt 1'))).toBe(true);
    await screenshot(page, 'console-run.png');
    await succeeded
      .first()
      .getByRole('button', { name: /^Hide the log of run/ })
      .click();
    expect(await log.count()).toBe(0);

    // Phones: nothing wider than the screen; runs and keys stay readable (rows become cards).
    await page.setViewportSize({ width: 390, height: 844 });
    const fitsScreen = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    expect(await fitsScreen()).toBe(true);
    await screenshot(page, 'console-run-phone.png');
    await page.getByRole('tab', { name: 'API keys' }).click();
    expect(await fitsScreen()).toBe(true);
    await screenshot(page, 'console-keys-phone.png');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('webhook endpoints: create one (secret shown once), trigger a run, see its deliveries succeed', async () => {
    await page.getByRole('tab', { name: 'Webhooks' }).click();
    const meta = (await (await fetch(`${gatewayUrl}/console/meta.json`)).json()) as { services: { name: string; webhooks: boolean }[] };
    const section = page.getByRole('region', { name: 'pipelines service webhooks' });
    await section.waitFor();
    if (!meta.services.find((s) => s.name === 'pipelines')!.webhooks) {
      // The gateway does not route /webhook-endpoints yet: the console says so instead of failing.
      await section.getByText(/not available on this service yet/).waitFor();
      return;
    }

    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      await section.getByRole('button', { name: 'New endpoint' }).click();
      await section.getByLabel('Endpoint URL').fill(receiverUrl);
      await section.getByRole('button', { name: 'Create endpoint' }).click();
      const secret = section.getByLabel('Signing secret', { exact: true });
      await secret.waitFor();
      expect(await secret.inputValue()).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      await section.getByRole('button', { name: 'I have stored it' }).click();
      const endpoint = section.getByRole('article', { name: receiverUrl });
      await endpoint.waitFor();

      await page.getByRole('tab', { name: 'Pipelines' }).click();
      const card = page.getByRole('article', { name: 'e2e sample' });
      const before = await card.locator('tbody tr[data-status="succeeded"]').count();
      await card.getByRole('button', { name: 'Trigger run' }).click();
      await eventually(async () => expect(await card.locator('tbody tr[data-status="succeeded"]').count()).toBe(before + 1), RUN_WAIT_MS);

      await page.getByRole('tab', { name: 'Webhooks' }).click();
      await endpoint.getByRole('button', { name: 'Show deliveries' }).click();
      await endpoint.getByRole('row').filter({ hasText: 'run.succeeded' }).filter({ hasText: 'succeeded' }).first().waitFor({ timeout: RUN_WAIT_MS });
      expect(received.length).toBeGreaterThan(0);
      expect(received[0]!.headers['webhook-signature']).toMatch(/^v1,/);
      await screenshot(page, 'console-webhooks.png');
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test('an interval schedule set in the page: the next run shows, ticks add runs with trigger schedule; removing it stops them', async () => {
    await page.getByRole('tab', { name: 'Pipelines' }).click();
    const card = page.getByRole('article', { name: 'e2e sample' });
    await card.getByText('Edit schedule').click();
    await card.getByLabel('Schedule', { exact: true }).selectOption('interval');
    await card.getByLabel('Interval (seconds)').fill('2');
    await card.getByRole('button', { name: 'Save schedule' }).click();
    await eventually(async () => expect(await card.locator('dd[data-fact="Schedule"]').textContent()).toBe('every 2 seconds'));
    expect(await card.locator('dd[data-fact="Next run"] time').count()).toBe(1);

    // Nobody triggers it: the page polls the pipeline once its next run is due and shows the tick's run.
    const ticked = card.locator('tbody tr[data-status="succeeded"]').filter({ hasText: 'schedule' });
    await ticked.first().waitFor({ timeout: RUN_WAIT_MS });
    expect(await ticked.first().locator('td[data-label="Scheduled for"] time').count()).toBe(1);
    await screenshot(page, 'console-schedule.png');

    await card.getByLabel('Schedule', { exact: true }).selectOption('none');
    await card.getByRole('button', { name: 'Save schedule' }).click();
    await eventually(async () => expect(await card.locator('dd[data-fact="Schedule"]').textContent()).toBe('none (runs only when triggered)'));
    expect(await card.locator('dd[data-fact="Next run"]').textContent()).toBe('—');
  });

  test('steering runs: enqueue and a run timeout set in the page; runs wait in line as pending, one is cancelled there; a cancelled and a timed-out run are retried (retry_of shown); the 21st pending run is refused in the API’s words', async () => {
    // An http-json source that holds its answer while `holding`: the run reading it stays running.
    let holding = true;
    const held: http.ServerResponse[] = [];
    const records = JSON.stringify([{ id: 'steered-1', name: 'one' }]);
    const answer = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(records);
    const source = http.createServer((_req, res) => (holding ? held.push(res) : answer(res)));
    const release = () => {
      holding = false;
      for (const res of held.splice(0)) if (!res.destroyed) answer(res);
    };
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    try {
      const key = await adminApi('POST', `/workspaces/${workspaceId}/api-keys`, {
        name: 'e2e steering',
        scopes: ['pipelines:read', 'pipelines:write', 'runs:read', 'runs:write'],
      });
      expect(key.status).toBe(201);
      const pipelinesApi = (method: string, path: string, body?: unknown) => api(key.body.token, method, `/pipelines/v3/pipelines${path}`, body);
      const created = await pipelinesApi('POST', '', {
        name: 'e2e steered',
        source: { connector: 'http-json', config: { url: `http://127.0.0.1:${(source.address() as AddressInfo).port}/records` } },
        destination: { connector: 'postgres', config: { table: 'e2e_console_steered' } },
      });
      expect(created.status).toBe(201);
      const pipelineId: string = created.body.id;
      /** The pipeline's runs, oldest (first triggered) first. */
      const runsOf = async (): Promise<{ id: string; status: string; retry_of: string | null; error: { code: string } | null }[]> =>
        (await pipelinesApi('GET', `/${pipelineId}/runs?limit=100`)).body.data;

      await page.getByRole('tab', { name: 'Pipelines' }).click();
      await page.getByRole('button', { name: 'Refresh pipelines' }).click();
      const card = page.getByRole('article', { name: 'e2e steered' });
      await card.waitFor();
      const fact = (name: string) => card.locator(`dd[data-fact="${name}"]`).textContent();
      expect(await fact('Concurrency policy')).toMatch(/^reject \(/);
      expect(await fact('Run timeout')).toBe('none');

      // The run settings beside the schedule: a timeout out of range is refused in the API's words, then saved.
      await card.getByText('Edit run settings').click();
      await card.getByLabel('Concurrency policy').selectOption('enqueue');
      const timeout = card.getByLabel(/^Run timeout/);
      await timeout.fill('5');
      await card.getByRole('button', { name: 'Save run settings' }).click();
      await page.getByRole('alert').filter({ hasText: 'Could not save the run settings' }).filter({ hasText: 'run_timeout_seconds' }).waitFor();
      await timeout.fill('600');
      await card.getByRole('button', { name: 'Save run settings' }).click();
      await eventually(async () => expect(await fact('Run timeout')).toBe('fail after 10 minutes running'));
      expect(await fact('Concurrency policy')).toMatch(/^enqueue \(/);
      expect((await pipelinesApi('GET', `/${pipelineId}`)).body).toMatchObject({ concurrency_policy: 'enqueue', run_timeout_seconds: 600 });

      // Three triggers: the first runs (its source holds the answer), the others wait in line, in trigger order.
      const trigger = card.getByRole('button', { name: 'Trigger run' });
      await trigger.click();
      await eventually(async () => expect(held).toHaveLength(1), RUN_WAIT_MS);
      const pending = card.locator('tbody tr[data-status="pending"]');
      await trigger.click();
      await eventually(async () => expect(await pending.count()).toBe(1));
      await trigger.click();
      await eventually(async () => expect(await pending.count()).toBe(2));
      const [first, second, third] = await runsOf();
      expect([first!.status, second!.status, third!.status]).toEqual(['running', 'pending', 'pending']);
      const row = (id: string, status = '') => card.locator(`tbody tr[data-run-id="${id}"]${status && `[data-status="${status}"]`}`);
      /** The row of the run that retries `id`, in `status`. */
      const retryRow = (id: string, status = '') => card.locator(`tbody tr${status && `[data-status="${status}"]`}:has([data-retry-of="${id}"])`);
      const statusOf = (id: string) => row(id).locator('td[data-label="Status"]').textContent();
      await eventually(async () => expect(await statusOf(first!.id)).toBe('running'));
      expect(await statusOf(second!.id)).toBe('pending next to start, of 2 in line');
      expect(await statusOf(third!.id)).toBe('pending 2nd of 2 in line');
      await card.screenshot({ path: join(ARTIFACTS_DIR, 'console-runs-pending.png') });

      // A pending run is cancelled in the page; the one before it stays next.
      await row(third!.id)
        .getByRole('button', { name: `Cancel run ${third!.id.slice(0, 8)}` })
        .click();
      const dialog = page.getByRole('dialog', { name: `Cancel run ${third!.id.slice(0, 8)}?` });
      expect(await dialog.textContent()).toContain('leaves the line');
      await dialog.getByRole('button', { name: 'Cancel run' }).click();
      await row(third!.id, 'cancelled').waitFor();
      await eventually(async () => expect(await statusOf(second!.id)).toBe('pending next to start'));

      // The running one is cancelled too; the next in line then runs (its source answers now) and succeeds.
      await row(first!.id)
        .getByRole('button', { name: `Cancel run ${first!.id.slice(0, 8)}` })
        .click();
      await page
        .getByRole('dialog', { name: `Cancel run ${first!.id.slice(0, 8)}?` })
        .getByRole('button', { name: 'Cancel run' })
        .click();
      await row(first!.id, 'cancelled').waitFor();
      release();
      await row(second!.id, 'succeeded').waitFor({ timeout: RUN_WAIT_MS });
      expect(
        await row(second!.id)
          .getByRole('button', { name: /^Retry run/ })
          .count(),
      ).toBe(0);

      // Retry the cancelled run: a new run names it in retry_of and succeeds.
      await row(first!.id)
        .getByRole('button', { name: `Retry run ${first!.id.slice(0, 8)}` })
        .click();
      const retryOfFirst = retryRow(first!.id);
      await retryOfFirst.waitFor();
      expect(await retryOfFirst.locator('td[data-label="Run"]').textContent()).toMatch(new RegExp(`retry of ${first!.id.slice(0, 8)}$`));
      await retryRow(first!.id, 'succeeded').waitFor({ timeout: RUN_WAIT_MS });
      expect((await runsOf()).find((run) => run.retry_of === first!.id)).toMatchObject({ status: 'succeeded' });

      // A 10 s timeout set in the page ends a run whose source never answers: failed (timeout); its retry succeeds.
      await timeout.fill('10');
      await card.getByRole('button', { name: 'Save run settings' }).click();
      await eventually(async () => expect(await fact('Run timeout')).toBe('fail after 10 seconds running'));
      holding = true;
      await trigger.click();
      await eventually(async () => expect(held).toHaveLength(1), RUN_WAIT_MS);
      const timedOut = (await runsOf()).at(-1)!;
      await row(timedOut.id, 'failed').waitFor({ timeout: RUN_WAIT_MS + 10_000 });
      expect((await runsOf()).at(-1)).toMatchObject({ id: timedOut.id, status: 'failed', error: { code: 'timeout' } });
      expect(await row(timedOut.id).locator('td[data-label="Error"]').textContent()).toMatch(/limit of 10/);
      release();
      await row(timedOut.id)
        .getByRole('button', { name: `Retry run ${timedOut.id.slice(0, 8)}` })
        .click();
      await retryRow(timedOut.id, 'succeeded').waitFor({ timeout: RUN_WAIT_MS });
      await eventually(async () => expect(await statusText()).toMatch(/succeeded/));
      await card.screenshot({ path: join(ARTIFACTS_DIR, 'console-runs-retry.png') });
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await card.screenshot({ path: join(ARTIFACTS_DIR, 'console-runs-retry-phone.png') });
      await page.setViewportSize({ width: 1280, height: 900 });

      // Empty is no timeout. With one run held and 20 waiting, one more trigger is refused in the API's words.
      await timeout.fill('');
      await card.getByRole('button', { name: 'Save run settings' }).click();
      await eventually(async () => expect(await fact('Run timeout')).toBe('none'));
      holding = true;
      await trigger.click();
      await eventually(async () => expect(held).toHaveLength(1), RUN_WAIT_MS);
      const line: string[] = [];
      for (let i = 0; i < 20; i++) {
        const queued = await pipelinesApi('POST', `/${pipelineId}/runs`, { trigger: 'manual' });
        expect(queued.body.status).toBe('pending');
        line.push(queued.body.id);
      }
      await trigger.click();
      await page.getByRole('alert').filter({ hasText: 'Could not trigger a run' }).filter({ hasText: 'at most 20 pending runs' }).waitFor();
      // Runs triggered elsewhere show once the pipeline is read again: the newest 10, all waiting.
      await card.getByRole('button', { name: 'Refresh', exact: true }).click();
      await eventually(async () => expect(await pending.count()).toBe(10));
      expect(await statusOf(line.at(-1)!)).toBe('pending 20th of 20 in line');
      for (const id of [...line, (await runsOf()).find((run) => run.status === 'running')!.id]) {
        expect((await pipelinesApi('POST', `/${pipelineId}/runs/${id}/cancel`)).status).toBe(200);
      }
      await eventually(async () => expect(await pending.count()).toBe(0));
    } finally {
      release();
      source.closeAllConnections();
      await new Promise((resolve) => source.close(resolve));
    }
  });

  test("lists the workspace's events; an open event's figures per gate follow validations made through the API, without a click", async () => {
    const key = await adminApi('POST', `/workspaces/${workspaceId}/api-keys`, {
      name: 'e2e gate scanner',
      scopes: ['events:read', 'events:write', 'tickets:read', 'tickets:write'],
    });
    expect(key.status).toBe(201);
    scannerToken = key.body.token;
    const startsAt = new Date(Date.now() + 86_400_000).toISOString();
    const concert = await eventsApi('POST', '/events', { name: 'e2e concert', starts_at: startsAt });
    expect(concert.status).toBe(201);
    expect((await eventsApi('POST', '/events', { name: 'e2e matinee', starts_at: startsAt })).status).toBe(201);
    for (const holder of ['ada', 'grace', 'alan'] as const) {
      const ticket = await eventsApi('POST', `/events/${concert.body.id}/tickets`, { holder_name: holder });
      expect(ticket.status).toBe(201);
      tickets[holder] = ticket.body.id;
    }
    page.on('request', (request) => {
      if (/^\/events\/v0\/events\/[^/]+\/stats$/.test(new URL(request.url()).pathname)) statsRequests++;
    });

    // Created through the API: listed (GET /events), oldest first.
    await page.getByRole('tab', { name: 'Events' }).click();
    const list = page.getByRole('table', { name: 'Events of the workspace' });
    await list.getByRole('row', { name: /e2e matinee/ }).waitFor();
    expect((await rowsOf(list)).map((row) => row.Name)).toEqual(['e2e concert', 'e2e matinee']);

    await page.getByRole('button', { name: 'Open event e2e concert' }).click();
    const event = page.getByRole('region', { name: 'e2e concert' });
    await eventually(async () => expect(await figures(event)).toEqual({ total: '3', issued: '3', validated: '0', 'rejected-duplicates': '0' }));
    expect(await event.locator('dd[data-figure="as-of"] time').count()).toBe(1);
    expect(await gateFigures(event)).toEqual([]);
    const ticketTable = event.getByRole('table', { name: 'Tickets' });
    // The tickets page is read after the figures: on a busy machine it may come a moment later.
    await eventually(async () =>
      expect((await rowsOf(ticketTable)).map((row) => [row.Holder, row.Status])).toEqual([
        ['ada', 'issued'],
        ['grace', 'issued'],
        ['alan', 'issued'],
      ]),
    );

    // Validations at the gate, through the API: nobody touches the page, its timer reads the figures again.
    expect((await eventsApi('POST', `/tickets/${tickets.ada}/validate`, { gate: 'north-1' })).status).toBe(200);
    expect((await eventsApi('POST', `/tickets/${tickets.grace}/validate`, {})).status).toBe(200);
    expect((await eventsApi('POST', `/tickets/${tickets.ada}/validate`, { gate: 'south-2' })).status).toBe(409);
    await eventually(async () => {
      expect(await figures(event)).toEqual({ total: '3', issued: '1', validated: '2', 'rejected-duplicates': '1' });
      expect(await gateFigures(event)).toEqual([
        ['north-1', '1'],
        ['(no gate)', '1'],
      ]);
    });
    // The tickets changed since the list was read are put in their rows (updated_since).
    await eventually(async () =>
      expect((await rowsOf(ticketTable)).map((row) => [row.Holder, row.Status, row.Gate])).toEqual([
        ['ada', 'validated', 'north-1'],
        ['grace', 'validated', '(no gate)'],
        ['alan', 'issued', '—'],
      ]),
    );
    await screenshot(page, 'console-events.png');
  });

  test("a ticket's check-in history; an undo with a reason adds an unvalidated entry and lowers the figures; a refused undo shows the API's message", async () => {
    const event = page.getByRole('region', { name: 'e2e concert' });
    const short = (id: string) => id.slice(0, 8);
    await event.getByRole('button', { name: `Show the check-ins of ticket ${short(tickets.ada)}` }).click();
    const history = event.getByRole('region', { name: `Check-ins of ticket ${short(tickets.ada)}` });
    const entries = async () => (await rowsOf(history.getByRole('table'))).map((row) => [row.Action, row.Gate, row['Scan id'], row.Reason]);
    await eventually(async () =>
      expect(await entries()).toEqual([
        ['validated', 'north-1', '—', '—'],
        ['rejected duplicate', 'south-2', '—', '—'],
      ]),
    );

    // The reason is required: spaces alone never leave the page.
    const reason = history.getByLabel('Reason for the undo');
    await reason.fill('   ');
    await history.getByRole('button', { name: 'Undo validation' }).click();
    await page.getByRole('alert').filter({ hasText: 'Give the reason for the undo' }).waitFor();
    expect(await entries()).toHaveLength(2);

    await reason.fill('wrong ticket scanned');
    await history.getByRole('button', { name: 'Undo validation' }).click();
    await eventually(async () => {
      expect((await entries()).at(-1)).toEqual(['unvalidated', '—', '—', 'wrong ticket scanned']);
      expect(await figures(event)).toEqual({ total: '3', issued: '2', validated: '1', 'rejected-duplicates': '1' });
      expect(await gateFigures(event)).toEqual([['(no gate)', '1']]);
    });
    await eventually(async () => expect(await statusText()).toContain('undone'));
    expect(await history.getByRole('button', { name: 'Undo validation' }).isHidden()).toBe(true);

    // Validated again by an offline scanner's upload: the history names the scan.
    const upload = await eventsApi('POST', `/events/${(await event.getAttribute('data-event-id'))!}/scans`, {
      scans: [{ scan_id: 'n1-0001', ticket_id: tickets.ada, scanned_at: new Date().toISOString(), gate: 'north-1' }],
    });
    expect(upload.body.results[0].status).toBe('validated');
    await eventually(async () => {
      expect((await entries()).at(-1)).toEqual(['validated', 'north-1', 'n1-0001', '—']);
      expect(await gateFigures(event)).toEqual([
        ['north-1', '1'],
        ['(no gate)', '1'],
      ]);
    });
    await screenshot(page, 'console-checkins.png');

    // Undone at the desk while a reason is being typed here: the page's undo is refused with the API's message.
    await event.getByRole('button', { name: `Show the check-ins of ticket ${short(tickets.grace)}` }).click();
    const graceHistory = event.getByRole('region', { name: `Check-ins of ticket ${short(tickets.grace)}` });
    await graceHistory.getByLabel('Reason for the undo').fill('refund');
    expect((await eventsApi('POST', `/tickets/${tickets.grace}/unvalidate`, { reason: 'undone at the box office' })).status).toBe(200);
    const refused = await eventsApi('POST', `/tickets/${tickets.grace}/unvalidate`, { reason: 'again' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.errors[0].code).toBe('not_validated');
    await graceHistory.getByRole('button', { name: 'Undo validation' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `Could not undo the validation: ${refused.body.error.message}` })
      .waitFor();
    await eventually(async () => {
      const rows = await rowsOf(graceHistory.getByRole('table'));
      expect(rows.map((row) => [row.Action, row.Reason])).toEqual([
        ['validated', '—'],
        ['unvalidated', 'undone at the box office'],
      ]);
      expect(await figures(event)).toEqual({ total: '3', issued: '2', validated: '1', 'rejected-duplicates': '1' });
    });
  });

  test('leaving the Events tab stops reading the open event; back on the tab it is read again', async () => {
    // The open event stays in the hidden tab panel.
    const event = page.getByRole('region', { name: 'e2e concert', includeHidden: true });
    await page.getByRole('tab', { name: 'Pipelines' }).click();
    const statsRequestsWhenLeft = statsRequests;
    expect(statsRequestsWhenLeft).toBeGreaterThan(2);
    expect((await eventsApi('POST', `/tickets/${tickets.alan}/validate`, { gate: 'west-3' })).status).toBe(200);
    // An absence needs time to show: two refresh periods pass in the page, then a request it makes after
    // them is seen (the page's requests are seen in order): a read due meanwhile would have been seen first.
    await twoRefreshPeriodsInThePage();
    const marker = page.waitForRequest((request) => new URL(request.url()).search === '?after-two-refresh-periods');
    await page.evaluate(() => fetch('/healthz?after-two-refresh-periods').then(() => undefined));
    await marker;
    expect(statsRequests).toBe(statsRequestsWhenLeft);
    expect(await figures(event)).toEqual({ total: '3', issued: '2', validated: '1', 'rejected-duplicates': '1' });

    // Back on the tab, the open event is read again: the validation made meanwhile shows.
    await page.getByRole('tab', { name: 'Events' }).click();
    await eventually(async () => {
      expect(await figures(event)).toEqual({ total: '3', issued: '1', validated: '2', 'rejected-duplicates': '1' });
      expect(await gateFigures(event)).toEqual([
        ['north-1', '1'],
        ['west-3', '1'],
      ]);
    });
    expect(statsRequests).toBeGreaterThan(statsRequestsWhenLeft);
  });

  test('charts over time: validations per gate of the open event, runs by status of a pipeline, delivery attempts by outcome of an endpoint whose delivery is resent', async () => {
    const fitsScreen = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    const noun = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

    // The open event (Events tab): a bar series per gate, as many validations as the series API counts.
    const event = page.getByRole('region', { name: 'e2e concert' });
    const eventId = (await event.getAttribute('data-event-id'))!;
    const checkIns = page.getByRole('region', { name: 'Validations per gate over time' });
    await eventually(async () => {
      const series = (await eventsApi('GET', `/events/${eventId}/stats/series`)).body;
      const total = series.buckets.reduce((sum: number, bucket: { validated: number }) => sum + bucket.validated, 0);
      expect(total).toBeGreaterThan(0);
      expect(await checkIns.locator('.series-summary').textContent()).toMatch(new RegExp(`^${noun(total, 'validation')} in the last 24 hours: .*north-1`));
    });
    await checkIns.locator('.series-chart .uplot canvas').first().waitFor();
    expect(await checkIns.locator('.series-chart').getAttribute('aria-label')).toMatch(/^Stacked bars of the validations per hour\./);
    expect(await checkIns.locator('.u-legend').textContent()).toContain('north-1');
    await screenshot(page, 'console-chart-checkins.png');

    // A pipeline with runs: its chart opens from the card, hourly, then daily.
    await page.getByRole('tab', { name: 'Pipelines' }).click();
    const card = page.getByRole('article', { name: 'e2e sample' });
    const succeededRuns = await card.locator('tbody tr[data-status="succeeded"]').count();
    expect(succeededRuns).toBeGreaterThan(0);
    await card.getByText('Runs over time').click();
    const runsChart = card.getByRole('region', { name: 'Runs by status' });
    await runsChart.locator('.series-chart .uplot canvas').first().waitFor();
    expect(await runsChart.locator('.series-summary').textContent()).toMatch(/^\d+ runs? in the last 24 hours: \d+ succeeded/);
    expect(await runsChart.locator('.u-legend').textContent()).toContain('succeeded');
    await screenshot(page, 'console-chart-runs.png');
    await runsChart.getByLabel('Period', { exact: true }).selectOption('day');
    await eventually(async () => expect(await runsChart.locator('.series-summary').textContent()).toMatch(/^\d+ runs? in the last 30 days: \d+ succeeded/));
    await runsChart.getByText('Runs by status: the numbers').click();
    expect(await runsChart.getByRole('table', { name: 'Runs by status: the numbers' }).locator('tbody tr').count()).toBeGreaterThan(0);

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await fitsScreen()).toBe(true);
    await screenshot(page, 'console-chart-runs-phone.png');
    await page.setViewportSize({ width: 1280, height: 900 });

    const meta = (await (await fetch(`${gatewayUrl}/console/meta.json`)).json()) as { services: { name: string; webhooks: boolean }[] };
    if (!meta.services.find((s) => s.name === 'pipelines')!.webhooks) return;

    // An endpoint with a receiver, a run's delivery to it, and that delivery sent again from its row.
    const received: IncomingHttpHeaders[] = [];
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.headers);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/resend`;
      await page.getByRole('tab', { name: 'Webhooks' }).click();
      const section = page.getByRole('region', { name: 'pipelines service webhooks' });
      await section.getByRole('button', { name: 'New endpoint' }).click();
      await section.getByLabel('Endpoint URL').fill(receiverUrl);
      await section.getByRole('button', { name: 'Create endpoint' }).click();
      await section.getByRole('button', { name: 'I have stored it' }).click();
      const endpoint = section.getByRole('article', { name: receiverUrl });
      await endpoint.waitFor();

      await page.getByRole('tab', { name: 'Pipelines' }).click();
      await card.getByRole('button', { name: 'Trigger run' }).click();
      await eventually(async () => expect(await card.locator('tbody tr[data-status="succeeded"]').count()).toBe(succeededRuns + 1), RUN_WAIT_MS);

      await page.getByRole('tab', { name: 'Webhooks' }).click();
      await endpoint.getByRole('button', { name: 'Show deliveries' }).click();
      const first = endpoint.locator('tbody tr').filter({ hasText: 'run.succeeded' });
      await first.first().waitFor({ timeout: RUN_WAIT_MS });
      await eventually(async () => expect(await first.first().locator('td[data-label="Status"]').textContent()).toBe('succeeded'), RUN_WAIT_MS);
      const eventIdSent = (await first.first().locator('td[data-label="Event id"]').textContent())!;
      const attempts = endpoint.getByRole('region', { name: 'Delivery attempts by outcome' });
      await attempts.locator('.series-chart .uplot canvas').first().waitFor();
      await eventually(async () =>
        expect(await attempts.locator('.series-summary').textContent()).toMatch(/^\d+ attempts? in the last 24 hours: \d+ succeeded/),
      );

      const deliveredBefore = received.filter((headers) => headers['webhook-id'] === eventIdSent).length;
      expect(deliveredBefore).toBe(1);
      await first
        .first()
        .getByRole('button', { name: `Resend event ${eventIdSent} (attempt 1, succeeded)` })
        .click();
      await eventually(async () => expect(await statusText()).toBe(`Event ${eventIdSent} (run.succeeded) queued again for ${receiverUrl} as attempt 2.`));
      // The new attempt: a row of its own, the same event (webhook-id) received again.
      const resent = endpoint
        .locator('tbody tr')
        .filter({ hasText: eventIdSent })
        .filter({ has: page.locator('td[data-label="Attempt"]', { hasText: /^2$/ }) });
      await resent.waitFor({ timeout: RUN_WAIT_MS });
      await eventually(async () => expect(await resent.locator('td[data-label="Status"]').textContent()).toBe('succeeded'), RUN_WAIT_MS);
      expect(received.filter((headers) => headers['webhook-id'] === eventIdSent)).toHaveLength(2);
      await screenshot(page, 'console-chart-deliveries.png');
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await fitsScreen()).toBe(true);
      await screenshot(page, 'console-chart-deliveries-phone.png');
      await page.setViewportSize({ width: 1280, height: 900 });

      // A disabled endpoint refuses a resend: the API's words in the alert.
      await endpoint.getByRole('button', { name: 'Disable' }).click();
      await endpoint.getByText('disabled', { exact: true }).waitFor();
      await resent.getByRole('button', { name: /^Resend event/ }).click();
      await page.getByRole('alert').filter({ hasText: 'The endpoint is disabled; enable it (PATCH enabled: true) to resend.' }).waitFor();
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }

    // Back on the Events tab at phone width: the check-ins chart fits too.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: 'Events' }).click();
    await checkIns.locator('.series-chart .uplot canvas').first().waitFor();
    expect(await fitsScreen()).toBe(true);
    await screenshot(page, 'console-chart-checkins-phone.png');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('warehouse: locations and an item made in the page; stock adjusted, transferred, reserved, committed and released; a refused over-reservation shows the API’s words', async () => {
    await page.getByRole('tab', { name: 'Warehouse' }).click();
    await page.getByText('No item yet.').waitFor();
    const locationsTable = page.locator('#locations-table');
    const itemsTable = page.locator('#items-table');

    // Lists first: each form opens from its button, and closes once sent.
    expect(await page.getByLabel('Location name').isHidden()).toBe(true);
    for (const [name, code] of [
      ['Aisle 3', 'AISLE'],
      ['Shop floor', 'SHOP'],
    ]) {
      await page.getByRole('button', { name: 'New location' }).click();
      await page.getByLabel('Location name').fill(name!);
      await page.getByLabel('Location code').fill(code!);
      await page.getByRole('button', { name: 'Create location' }).click();
      await locationsTable.getByRole('cell', { name: code!, exact: true }).waitFor();
      expect(await page.getByLabel('Location name').isHidden()).toBe(true);
    }
    await page.getByRole('button', { name: 'New item' }).click();
    await page.getByLabel('SKU').fill('MUG-1');
    await page.getByLabel('Item name').fill('Mug');
    await page.getByLabel('Default location').selectOption({ label: 'AISLE — Aisle 3' });
    await page.getByRole('button', { name: 'Create item' }).click();
    const item = page.getByRole('region', { name: 'MUG-1 — Mug' });
    await item.waitFor();
    const itemId = (await item.getAttribute('data-item-id'))!;

    const levels = async () =>
      (await rowsOf(item.getByRole('table', { name: 'Stock per location' }))).map((r) => [r.Location, r['On hand'], r.Reserved, r.Available]);
    const reservations = async () =>
      (await rowsOf(item.getByRole('table', { name: 'Reservations' }))).map((r) => [r.Location, r.Quantity, r.Status, r.Reference]);
    /** Opens an action's form from its button, fills it, sends it, and waits for the form to close. */
    const act = async (action: string, fill: (form: Locator) => Promise<void>) => {
      await item.getByRole('button', { name: action, exact: true }).click();
      const form = item.getByRole('form', { name: `${action} MUG-1` });
      await fill(form);
      await form.getByRole('button', { name: action, exact: true }).click();
      return form;
    };

    await act('Adjust stock', async (form) => {
      expect(await form.getByLabel('Location').inputValue()).not.toBe(''); // the item's default location
      await form.getByLabel('Change (+ in, − out)').fill('10');
      await form.getByLabel('Reason').selectOption('receipt');
    });
    await eventually(async () => expect(await levels()).toEqual([['AISLE', '10', '0', '10']]));

    const transfer = await act('Transfer', async (form) => {
      await form.getByLabel('From').selectOption({ label: 'AISLE — Aisle 3' });
      await form.getByLabel('To').selectOption({ label: 'SHOP — Shop floor' });
      await form.getByLabel('Quantity').fill('4');
    });
    await transfer.waitFor({ state: 'detached' });
    await eventually(async () =>
      expect(new Set(await levels())).toEqual(
        new Set([
          ['AISLE', '6', '0', '6'],
          ['SHOP', '4', '0', '4'],
        ]),
      ),
    );

    await act('Reserve', async (form) => {
      await form.getByLabel('Location').selectOption({ label: 'SHOP — Shop floor' });
      await form.getByLabel('Quantity').fill('3');
      await form.getByLabel('Reference (optional)').fill('Order 7');
    });
    await eventually(async () => {
      expect(await reservations()).toEqual([['SHOP', '3', 'active', 'Order 7']]);
      expect(await levels()).toContainEqual(['SHOP', '4', '3', '1']);
    });
    // The list shows the item's levels too.
    await eventually(async () => {
      const [row] = await rowsOf(itemsTable);
      expect(row).toMatchObject({ SKU: 'MUG-1', Quantity: '10' });
      expect(row!.Levels!.split(' · ').sort()).toEqual(['AISLE 6', 'SHOP 4 (3 reserved)']);
    });
    await screenshot(page, 'console-warehouse.png');

    // More than is available at the level: the API refuses it, and the alert says what the API says.
    const key = await adminApi('POST', `/workspaces/${workspaceId}/api-keys`, { name: 'e2e warehouse', scopes: ['items:read', 'items:write', 'stock:write'] });
    const shopId = (await locationsTable.locator('tr', { hasText: 'SHOP' }).getAttribute('data-location-id'))!;
    const refused = await api(key.body.token, 'POST', `/warehouse/v1/items/${itemId}/reservations`, { location_id: shopId, quantity: 2 });
    expect(refused.status).toBe(409);
    expect(refused.body.error.errors[0].code).toBe('insufficient_stock');
    const overForm = await act('Reserve', async (form) => {
      await form.getByLabel('Location').selectOption({ label: 'SHOP — Shop floor' });
      await form.getByLabel('Quantity').fill('2');
    });
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: `Could not reserve: ${refused.body.error.message}` }).waitFor();
    expect(await alert.getByRole('listitem').allTextContents()).toEqual([`quantity: ${refused.body.error.errors[0].message}`]);
    expect(await overForm.isVisible()).toBe(true); // kept open to correct
    await item.getByRole('form', { name: 'Reserve MUG-1' }).getByRole('button', { name: 'Cancel' }).click();
    expect(await reservations()).toHaveLength(1);
    await screenshot(page, 'console-warehouse-refused.png');

    // Commit the reservation: the stock leaves the level as a sale.
    const reservationId = (await item.locator('tr[data-reservation-id]').first().getAttribute('data-reservation-id'))!;
    await item.getByRole('button', { name: `Commit reservation ${reservationId.slice(0, 8)}` }).click();
    await eventually(async () => {
      expect(await reservations()).toEqual([['SHOP', '3', 'committed', 'Order 7']]);
      expect(await levels()).toContainEqual(['SHOP', '1', '0', '1']);
      expect(await item.locator('dd[data-fact="Quantity"]').textContent()).toBe('7');
    });
    await eventually(async () => expect(await statusText()).toContain('Reservation of 3 at SHOP (Order 7) committed.'));

    // Reserve at the aisle and release it: the units are available again.
    await act('Reserve', async (form) => {
      await form.getByLabel('Quantity').fill('2');
    });
    await eventually(async () => expect(await reservations()).toContainEqual(['AISLE', '2', 'active', '—']));
    const second = (await item.locator('tr[data-reservation-id][data-status="active"]').getAttribute('data-reservation-id'))!;
    await item.getByRole('button', { name: `Release reservation ${second.slice(0, 8)}` }).click();
    await eventually(async () => {
      expect(await reservations()).toContainEqual(['AISLE', '2', 'released', '—']);
      expect(await levels()).toContainEqual(['AISLE', '6', '0', '6']);
    });
    // What the page shows is what the API holds.
    const stock = await api(key.body.token, 'GET', `/warehouse/v1/items/${itemId}/stock`);
    expect(stock.body.quantity).toBe(7);
    expect(stock.body.levels.map((l: { on_hand: number; reserved: number }) => [l.on_hand, l.reserved]).sort()).toEqual([
      [1, 0],
      [6, 0],
    ]);

    // The per-location view: the items with stock at the shop.
    await page.getByRole('button', { name: 'Show the stock at SHOP' }).click();
    const shop = page.getByRole('region', { name: 'Stock at SHOP' });
    await eventually(async () => expect(await rowsOf(shop.getByRole('table'))).toEqual([{ SKU: 'MUG-1', 'On hand': '1', Reserved: '0', Available: '1' }]));
    await screenshot(page, 'console-warehouse-location.png');

    // Phones: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await item.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await screenshot(page, 'console-warehouse-phone.png');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  describe('addresses, search, zones and phones, in a second tab (Berlin time, en-GB)', () => {
    let tab: Page;
    let second: BrowserContext;
    const ids = { pipeline: '', run: '', event: '', endpoint: '', item: '', location: '', reservation: '', cron: '' };
    const at = (path: string) => `${gatewayUrl}/console#/workspaces/${workspaceId}${path}`;
    const fitsScreen = () => tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

    beforeAll(async () => {
      // What the first tab made, by the ids its rows and cards carry.
      ids.pipeline = (await page.locator('article[data-pipeline-id]', { hasText: 'e2e sample' }).getAttribute('data-pipeline-id'))!;
      ids.run = (await page.locator(`article[data-pipeline-id="${ids.pipeline}"] tbody tr[data-status="succeeded"]`).first().getAttribute('data-run-id'))!;
      ids.event = (await page.locator('#events-table tr[data-event-id]').first().getAttribute('data-event-id'))!;
      ids.endpoint =
        (await page
          .locator('#webhook-services article[data-endpoint-id]')
          .first()
          .getAttribute('data-endpoint-id', { timeout: 1_000 })
          .catch(() => null)) ?? '';
      ids.item = (await page.locator('#items-table tr[data-item-id]').first().getAttribute('data-item-id'))!;
      ids.location = (await page.locator('#locations-table tr[data-location-id]', { hasText: 'SHOP' }).getAttribute('data-location-id'))!;
      ids.reservation = (await page.locator('#item-detail tr[data-reservation-id]').first().getAttribute('data-reservation-id'))!;
      // A pipeline that runs at 03:00 in Berlin, made through the API.
      const key = await adminApi('POST', `/workspaces/${workspaceId}/api-keys`, { name: 'e2e cron maker', scopes: ['pipelines:write'] });
      const cron = await api(key.body.token, 'POST', '/pipelines/v3/pipelines', {
        name: 'e2e berlin nightly',
        source: { connector: 'sample', config: { records: 1 } },
        destination: { connector: 'postgres', config: { table: 'e2e_berlin_records' } },
        schedule: { type: 'cron', cron: '0 3 * * *', timezone: 'Europe/Berlin' },
      });
      expect(cron.status).toBe(201);
      ids.cron = cron.body.id;
      second = await context.browser()!.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
      second.setDefaultTimeout(WAIT_MS);
      second.on('weberror', (error) => browser.problems.push(`second tab: page error: ${error.error().message}`));
      second.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy|Trusted ?(Type|HTML|Script)|Refused to/i.test(message.text())) {
          browser.problems.push(`second tab: ${message.text()}`);
        }
      });
      tab = await second.newPage();
    });

    afterAll(async () => {
      await second?.close();
    });

    test("a shared address opens its object once signed in: the event's address shows the event", async () => {
      await tab.goto(at(`/events/${ids.event}`));
      await tab.getByRole('heading', { name: 'Sign in' }).waitFor();
      await tab.getByLabel('Admin token').fill(adminToken);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('tab', { name: 'Events', selected: true }).waitFor();
      await tab.getByRole('region', { name: 'e2e concert' }).waitFor();
      expect(tab.url()).toBe(at(`/events/${ids.event}`));
    });

    test('opening objects sets their addresses; back and forward follow them', async () => {
      await tab.getByRole('tab', { name: 'API keys' }).click();
      await eventually(async () => expect(tab.url()).toBe(at('/keys')));
      await tab
        .locator(`#keys-table tr[data-key-id="${rolledKey.id}"]`)
        .getByRole('button', { name: /^Open key/ })
        .click();
      const key = tab.getByRole('region', { name: 'Key “e2e edited key”' });
      await key.waitFor();
      await eventually(async () => expect(tab.url()).toBe(at(`/keys/${rolledKey.id}`)));

      await tab.goBack();
      await key.waitFor({ state: 'detached' });
      expect(tab.url()).toBe(at('/keys'));
      await tab.goBack();
      await tab.getByRole('tab', { name: 'Events', selected: true }).waitFor();
      await tab.getByRole('region', { name: 'e2e concert' }).waitFor();
      await tab.goForward();
      await tab.getByRole('tab', { name: 'API keys', selected: true }).waitFor();
      await tab.goForward();
      await key.waitFor();
    });

    test("each object's address shows it: key, pipeline, run, event, endpoint, item, location, reservation", async () => {
      await tab.goto(at(`/pipelines/${ids.pipeline}/runs/${ids.run}`));
      const card = tab.locator(`article[data-pipeline-id="${ids.pipeline}"]`);
      await card.getByRole('region', { name: `Log of run ${ids.run.slice(0, 8)}` }).waitFor();
      expect(await card.getAttribute('aria-current')).toBe('true');
      await card
        .getByRole('region', { name: /^Log of run/ })
        .getByRole('row')
        .filter({ hasText: 'status: succeeded' })
        .waitFor();
      await screenshot(tab, 'console-address-run.png');

      await tab.goto(at(`/pipelines/${ids.pipeline}`));
      await card.getByRole('region', { name: /^Log of run/ }).waitFor({ state: 'detached' });

      await tab.goto(at(`/keys/${limitedKey.id}`));
      await tab.getByRole('tab', { name: 'API keys', selected: true }).waitFor();
      await tab.locator(`section.key[data-key-id="${limitedKey.id}"]`).waitFor();

      await tab.goto(at(`/warehouse/items/${ids.item}`));
      await tab.getByRole('region', { name: 'MUG-1 — Mug' }).waitFor();
      await tab.goto(at(`/warehouse/reservations/${ids.reservation}`));
      await tab.locator(`tr[data-reservation-id="${ids.reservation}"][aria-current="true"]`).waitFor();
      await tab.goto(at(`/warehouse/locations/${ids.location}`));
      await tab.getByRole('region', { name: 'Stock at SHOP' }).waitFor();

      if (ids.endpoint) {
        await tab.goto(at(`/webhooks/pipelines/${ids.endpoint}`));
        const endpoint = tab.locator(`article[data-endpoint-id="${ids.endpoint}"]`);
        await endpoint.getByRole('button', { name: 'Hide deliveries' }).waitFor();
      }
    });

    test('an address that names nothing is refused without a request; an unknown id says what the API said', async () => {
      const requests: string[] = [];
      const record = (request: { url: () => string }) => requests.push(request.url());
      tab.on('request', record);
      // Set as the page's own hash (as a pasted link would be), so the tab stays signed in.
      await tab.evaluate((path) => (location.hash = path), `#/workspaces/${workspaceId}/keys/<img src=x onerror=alert(1)>`);
      await tab.getByRole('alert').filter({ hasText: 'This address names nothing the console shows' }).waitFor();
      tab.off('request', record);
      // Nothing was asked for the address (the page's own polls go on meanwhile): no key read, nothing with its text.
      expect(requests.filter((url) => url.includes('/api-keys/') || /img|onerror/i.test(decodeURIComponent(url)))).toEqual([]);
      expect(await tab.locator('img').count()).toBe(0);

      await tab.goto(at(`/events/${randomUUID()}`));
      await tab.getByRole('alert').filter({ hasText: 'Could not open the address' }).waitFor();
    });

    test('times name their zone: the browser’s (Berlin), and a cron’s own zone with UTC beside it', async () => {
      await tab.goto(at(`/keys/${rolledKey.id}`));
      const created = tab.locator(`#keys-table tr[data-key-id="${rolledKey.id}"] td[data-label="Created"] time`);
      expect(await created.textContent()).toMatch(/\d{2}:\d{2}:\d{2} CES?T$/);
      expect(await tab.getByLabel(/^Expiry date and time/).count()).toBe(1);
      expect(await tab.locator('#key-expiry-custom-label').textContent()).toBe('Expiry date and time (Europe/Berlin)');

      await tab.goto(at(`/pipelines/${ids.cron}`));
      const nightly = tab.getByRole('article', { name: 'e2e berlin nightly' });
      await nightly.waitFor();
      expect(await nightly.locator('dd[data-fact="Next run"]').textContent()).toMatch(/03:00 Europe\/Berlin \((01|02):00 UTC\)$/);
      await screenshot(tab, 'console-schedule-zone.png');
    });

    test('search: workspaces by name, keys by name or prefix, newest first', async () => {
      await tab.getByRole('button', { name: 'Switch workspace' }).click();
      await tab.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
      await tab.getByLabel('Search workspaces').fill(workspaceName.toUpperCase());
      await eventually(async () => expect(await tab.locator('#workspace-list li').count()).toBe(1));
      expect(await tab.locator('#workspaces-note').textContent()).toMatch(/^1 of \d+ workspaces? match/);
      await tab.getByLabel('Search workspaces').fill('no such workspace anywhere');
      await eventually(async () => expect(await tab.locator('#workspace-list li').count()).toBe(0));
      await tab.getByLabel('Search workspaces').fill(workspaceName.slice(4));
      await tab.getByRole('button', { name: `Open workspace ${workspaceName}` }).click();
      await tab.getByRole('tab', { name: 'API keys', selected: true }).waitFor();

      // Newest first: the session key just made heads the list.
      const rows = tab.locator('#keys-table tbody tr');
      await eventually(async () => expect(await rows.first().locator('td[data-label="Name"]').textContent()).toContain('console session'));
      const created = await rows.locator('td[data-label="Created"] time').evaluateAll((times) => times.map((t) => Date.parse(t.getAttribute('datetime')!)));
      expect(created).toEqual([...created].sort((a, b) => b - a));

      await tab.getByLabel('Search keys').fill('edited');
      await eventually(async () =>
        expect(new Set(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.keyId)))).toEqual(new Set([limitedKey.id, rolledKey.id])),
      );
      const prefix = (await listedKey(rolledKey.id)).token_prefix as string;
      await tab.getByLabel('Search keys').fill(`${prefix}…`);
      await eventually(async () => expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.keyId))).toEqual([rolledKey.id]));
      await tab.getByLabel('Search keys').fill('');
    });

    test('each tab at desktop and phone width (390 px): nothing is wider than the screen', async () => {
      const tabs = ['API keys', 'Pipelines', 'Events', 'Warehouse', 'Webhooks', 'Quotas'];
      for (const [width, height, suffix] of [
        [1280, 900, 'desktop'],
        [390, 844, 'phone'],
      ] as const) {
        await tab.setViewportSize({ width, height });
        for (const name of tabs) {
          await tab.getByRole('tab', { name }).click();
          await tab.getByRole('tab', { name, selected: true }).waitFor();
          await tab.waitForLoadState('networkidle').catch(() => undefined);
          expect({ tab: name, width, fits: await fitsScreen() }).toEqual({ tab: name, width, fits: true });
          await screenshot(tab, `console-tab-${name.toLowerCase().replace(/\s+/g, '-')}-${suffix}.png`);
        }
      }
      // The tab bar itself stays within the screen: its tabs wrap or scroll inside it.
      const bar = await tab.locator('[role="tablist"]').evaluate((el) => el.getBoundingClientRect().right);
      expect(bar).toBeLessThanOrEqual(390);
      await tab.getByRole('button', { name: 'Switch workspace' }).click();
      await tab.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
      expect(await fitsScreen()).toBe(true);
      await screenshot(tab, 'console-workspaces-phone.png');
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByRole('heading', { name: 'Sign in' }).waitFor();
    });
  });

  test('every control has an accessible name and a visible keyboard focus', async () => {
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('button, input, select, textarea, [role="tab"]')]
        .filter((el) => {
          if (el instanceof HTMLInputElement && el.type === 'hidden') return false;
          const labelled = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
          if (el instanceof HTMLButtonElement || el.getAttribute('role') === 'tab') return !(labelled || el.textContent?.trim());
          return !(labelled || (el as HTMLInputElement).labels?.length);
        })
        .map((el) => el.outerHTML.slice(0, 120)),
    );
    expect(unnamed).toEqual([]);
    expect(await page.getByRole('status').count()).toBe(1);
    expect(await page.locator('#status').getAttribute('aria-live')).toBe('polite');

    await page.getByRole('tab', { name: 'API keys' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Pipelines' }).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe('none');
  });

  test('switching workspace while the Events tab reads an open event: no read makes a new session key for the workspace left', async () => {
    await page.getByRole('tab', { name: 'Events' }).click();
    await page.getByRole('button', { name: 'Open event e2e concert' }).click();
    await page.getByRole('region', { name: 'e2e concert' }).locator('tr[data-gate]').first().waitFor();
    // The revocation is held for two refresh periods, so the Events tab's timer is due while the workspace is being left.
    const revocation = '**/admin/v1/workspaces/*/api-keys/*';
    await page.route(revocation, async (route) => {
      await twoRefreshPeriodsInThePage();
      await route.continue();
    });
    try {
      await page.getByRole('button', { name: 'Switch workspace' }).click();
      await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
    } finally {
      await page.unroute(revocation);
    }
    const sessions = (await adminApi('GET', `/workspaces/${workspaceId}/api-keys`)).body.data.filter((k: { name: string }) => k.name === 'console session');
    expect(sessions.filter((k: { revoked_at: string | null }) => k.revoked_at === null)).toEqual([]);

    await page.getByRole('button', { name: `Open workspace ${workspaceName}` }).click();
    await page.getByRole('tab', { name: 'API keys', selected: true }).waitFor();
  });

  test('switching workspace and signing out revoke the console session keys and forget the admin token', async () => {
    await page.getByRole('button', { name: 'Switch workspace' }).click();
    await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
    const afterSwitch = (await adminApi('GET', `/workspaces/${workspaceId}/api-keys`)).body.data.filter((k: { name: string }) => k.name === 'console session');
    expect(afterSwitch.every((k: { revoked_at: string | null }) => k.revoked_at !== null)).toBe(true);

    await page.getByRole('button', { name: `Open workspace ${workspaceName}` }).click();
    await page.getByRole('tab', { name: 'API keys', selected: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await eventually(async () => expect(await statusText()).toContain('Signed out'));

    const sessions = (await adminApi('GET', `/workspaces/${workspaceId}/api-keys`)).body.data.filter((k: { name: string }) => k.name === 'console session');
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    expect(sessions.filter((k: { revoked_at: string | null }) => k.revoked_at === null)).toEqual([]);
    expect(await page.content()).not.toContain(adminToken);
  });

  test('no CSP or Trusted Types violation, no script error and no request to another origin happened', () => {
    expect(browser.problems).toEqual([]);
    expect(browser.otherOrigins).toEqual([]);
  });
});

describe('the console over plain http on a host name (not a secure context)', () => {
  // Chromium resolves console.test to the gateway: http://console.test is no secure context, so
  // crypto.randomUUID is missing there and the client makes Idempotency-Keys from getRandomValues.
  const { port } = new URL(gatewayUrl);
  const origin = `http://console.test:${port}`;
  let insecure: BrowserSession;

  beforeAll(async () => {
    insecure = await openBrowser(origin, ['--host-resolver-rules=MAP console.test 127.0.0.1']);
  });

  afterAll(async () => {
    await insecure?.close();
  });

  test('a service POST carries a UUID Idempotency-Key; pagehide revokes the session key with a keepalive DELETE sent by the client', async () => {
    const tab = await insecure.context.newPage();
    // What the page hands to fetch (the client sends Request objects): whether each went keepalive.
    await tab.addInitScript(() => {
      const sent: { method: string; url: string; keepalive: boolean }[] = [];
      Object.assign(window, { sent });
      const original = window.fetch.bind(window);
      window.fetch = (input, init) => {
        if (input instanceof Request) sent.push({ method: input.method, url: input.url, keepalive: init?.keepalive ?? input.keepalive });
        return original(input, init);
      };
    });
    await tab.goto(`${origin}/console`);
    expect(await tab.evaluate(() => ({ secure: window.isSecureContext, randomUUID: typeof crypto.randomUUID }))).toEqual({
      secure: false,
      randomUUID: 'undefined',
    });
    await tab.getByLabel('Admin token').fill(adminToken);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    const name = `e2e http ${randomUUID().slice(0, 8)}`;
    await tab.getByRole('button', { name: 'New workspace' }).click();
    await tab.getByLabel('New workspace name').fill(name);
    await tab.getByRole('button', { name: 'Create workspace' }).click();
    await tab.getByRole('tab', { name: 'API keys', selected: true }).waitFor();

    await tab.getByRole('tab', { name: 'Pipelines' }).click();
    await tab.getByRole('button', { name: 'New pipeline' }).click();
    await tab.getByLabel('Pipeline name').fill('e2e over http');
    await tab.getByLabel('Source connector').selectOption('sample');
    await tab.getByLabel('Destination table (postgres)').fill('e2e_console_http_records');
    const created = tab.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/pipelines/v3/pipelines');
    await tab.getByRole('button', { name: 'Create pipeline' }).click();
    expect((await created).headers()['idempotency-key']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await tab.getByRole('article', { name: 'e2e over http' }).waitFor();

    const id = await findWorkspaceId(name);
    const sessionKeys = async () =>
      (await adminApi('GET', `/workspaces/${id}/api-keys`)).body.data.filter((k: { name: string }) => k.name === 'console session');
    expect((await sessionKeys()).filter((k: { revoked_at: string | null }) => k.revoked_at === null)).toHaveLength(1);
    const [session] = await sessionKeys();
    // Headless Chromium finishes a request of a closed tab even without keepalive, so the page is
    // sent pagehide and what it handed to fetch is read instead.
    await tab.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pagehide')));
    await eventually(async () => expect((await sessionKeys()).filter((k: { revoked_at: string | null }) => k.revoked_at === null)).toEqual([]));
    const sent = await tab.evaluate(() => (window as unknown as { sent: { method: string; url: string; keepalive: boolean }[] }).sent);
    expect(sent.filter((request) => request.method === 'DELETE')).toEqual([
      { method: 'DELETE', url: `${origin}/admin/v1/workspaces/${id}/api-keys/${session.id}`, keepalive: true },
    ]);
    expect(sent.filter((request) => request.method !== 'DELETE').every((request) => !request.keepalive)).toBe(true);
    await tab.close();
  });

  test('no CSP or Trusted Types violation, no script error and no request to another origin happened there either', () => {
    expect(insecure.problems).toEqual([]);
    expect(insecure.otherOrigins).toEqual([]);
  });
});
