import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Locator, Page } from 'playwright-core';
import { openBrowser, screenshot, type BrowserSession } from './browser';

// The API reference (/docs) in Chromium, on the documents the running services give the gateway:
// each service's reference and the admin API's, a shared link to an operation, its samples (run as
// pasted), nested schema fields, the sidebar filter and a malformed address, all under the page's
// strict CSP with Trusted Types.
const gatewayUrl = process.env.E2E_GATEWAY_URL!;
const adminToken = process.env.E2E_ADMIN_TOKEN!;
const SERVICES = ['events', 'warehouse', 'pipelines', 'admin'] as const;
type ServiceName = (typeof SERVICES)[number];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

interface DocumentedOperation {
  id: string;
  method: string;
  path: string;
  scope: string | undefined;
  statuses: string[];
}

interface ServiceReference {
  title: string;
  operations: DocumentedOperation[];
  /** The fields of one element of an error body's `errors[]`. */
  fieldErrorFields: string[];
}

/** What the page will show of a service, read from the document the gateway serves it. */
async function serviceReference(service: ServiceName): Promise<ServiceReference> {
  const res = await fetch(`${gatewayUrl}/docs/${service}.json`);
  expect(res.status).toBe(200);
  const doc = await res.json();
  const operations = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      id: item[method].operationId as string,
      method,
      path,
      scope: item[method]['x-required-scope'] as string | undefined,
      statuses: Object.keys(item[method].responses),
    })),
  );
  return { title: doc.info.title, operations, fieldErrorFields: Object.keys(doc.components.schemas.FieldError.properties) };
}

let browser: BrowserSession;
let page: Page;
const references = new Map<ServiceName, ServiceReference>();
const reference = (service: ServiceName): ServiceReference => references.get(service)!;

beforeAll(async () => {
  for (const service of SERVICES) references.set(service, await serviceReference(service));
  browser = await openBrowser(gatewayUrl);
  page = await browser.context.newPage();
});

afterAll(async () => {
  await browser?.close();
});

const serviceTitle = (on: Page, title: string) => on.getByRole('heading', { level: 1, name: title, exact: true });
/** The ids of these operations' sections (`op-<operationId>`), sorted. */
const sectionIds = (operations: DocumentedOperation[]) => operations.map((op) => `op-${op.id}`).sort();

/** The ids (`op-<operationId>`) of the operations the sidebar lists and of those the reference shows, hidden ones left out. */
async function shownOperations(): Promise<{ sidebar: string[]; reference: string[] }> {
  const sidebar = await page
    .locator('#toc a[href*="/op/"]')
    .filter({ visible: true })
    .evaluateAll((links) => links.map((a) => `op-${a.getAttribute('href')!.split('/op/')[1]}`));
  const shown = await page
    .locator('#reference section.operation[id^="op-"]')
    .filter({ visible: true })
    .evaluateAll((sections) => sections.map((s) => s.id));
  return { sidebar: sidebar.sort(), reference: shown.sort() };
}

/** Opens the first `<details>` within `scope` whose own summary matches `summary`, and gives it back. */
async function openDetails(scope: Locator, summary: RegExp): Promise<Locator> {
  const details = scope
    .locator('details')
    .filter({ has: page.locator(':scope > summary', { hasText: summary }) })
    .first();
  if ((await details.getAttribute('open')) === null) await details.locator(':scope > summary').click();
  await details.locator(':scope > :not(summary)').first().waitFor();
  return details;
}

describe('API reference in Chromium', () => {
  test('opens /docs and each service (and the Admin tab) by its tab: the title, and every operation of its document listed and shown', async () => {
    const response = await page.goto(`${gatewayUrl}/docs`);
    expect(response?.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("require-trusted-types-for 'script'");
    // Without an address the first service is shown.
    await serviceTitle(page, reference('events').title).waitFor();
    // Every service gave its document: no "unavailable" notice.
    expect(await page.getByRole('status').isHidden()).toBe(true);

    const tabs = page.getByRole('navigation', { name: 'Services' });
    for (const service of SERVICES) {
      const { title, operations } = reference(service);
      await tabs.getByRole('link', { name: title, exact: true }).click();
      await serviceTitle(page, title).waitFor();
      expect(page.url()).toBe(`${gatewayUrl}/docs#/${service}`);
      expect(await tabs.getByRole('link', { name: title, exact: true }).getAttribute('aria-current')).toBe('page');
      expect(await page.title()).toBe(`${title} · API reference`);
      expect(operations.length).toBeGreaterThan(0);
      expect(await shownOperations()).toEqual({ sidebar: sectionIds(operations), reference: sectionIds(operations) });
      await screenshot(page, `docs-${service}.png`, { fullPage: false });
    }
  });

  test("a shared link to an operation opens the page on that operation's section, scrolled to below the top bar", async () => {
    const { operations } = reference('events');
    // Far enough down the page that being scrolled to shows.
    const linked = operations.at(-1)!;
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${gatewayUrl}/docs#/events/op/${linked.id}`);
      const section = tab.locator(`section#op-${linked.id}`);
      await section.waitFor();
      const { top, scrollMargin, scrollY } = await section.evaluate((s) => ({
        top: s.getBoundingClientRect().top,
        scrollMargin: parseFloat(getComputedStyle(s).scrollMarginTop),
        scrollY: window.scrollY,
      }));
      expect(scrollY).toBeGreaterThan(0);
      expect(Math.abs(top - scrollMargin)).toBeLessThan(2);
      // Its success answer is unfolded, the errors folded.
      const success = linked.statuses.filter((status) => /^[123]/.test(status));
      expect(await section.locator('details.response[open] > summary .status-code').allTextContents()).toEqual(success);
      await screenshot(tab, 'docs-events-operation.png', { fullPage: false });
    } finally {
      await tab.close();
    }
  });

  test("a nested schema's fields open as a table: the error body's errors[] element, three levels down", async () => {
    const { operations, fieldErrorFields } = reference('events');
    const withBadRequest = operations.find((op) => op.statuses.includes('400'))!;
    await page.goto(`${gatewayUrl}/docs#/events/op/${withBadRequest.id}`);
    const section = page.locator(`section#op-${withBadRequest.id}`);
    await section.waitFor();

    const badRequest = await openDetails(section, /^400/);
    const body = await openDetails(badRequest, /^Body: Error$/);
    const error = await openDetails(body, /^Fields of error$/);
    const errors = await openDetails(error, /^Fields of errors$/);
    const table = errors.getByRole('table');
    expect(await table.count()).toBe(1);
    expect(await table.locator('tbody > tr > td:first-child code').allTextContents()).toEqual(fieldErrorFields);
    // Once a regression: the nested view showed "[object HTMLTableElement]" instead of the table.
    expect(await badRequest.textContent()).not.toContain('[object');
    // The error body's fields from their top, just below the sticky top bar.
    await error.evaluate((details) => window.scrollTo(0, details.getBoundingClientRect().top + window.scrollY - 80));
    await screenshot(page, 'docs-events-error-fields.png', { fullPage: false });
  });

  test('the sidebar filter narrows the operations to those matching a path word or a scope name', async () => {
    await page.goto(`${gatewayUrl}/docs#/events`);
    const { operations } = reference('events');
    const filter = page.getByLabel('Filter operations');
    const narrowed = async (query: string, expected: DocumentedOperation[]): Promise<void> => {
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(operations.length);
      await filter.fill(query);
      const ids = sectionIds(expected);
      expect(await shownOperations()).toEqual({ sidebar: ids, reference: ids });
    };

    // "tickets" is a path word and the start of two scope names (offline scans need tickets:write).
    await narrowed(
      'tickets',
      operations.filter((op) => op.path.includes('tickets') || op.scope?.startsWith('tickets:')),
    );
    await narrowed(
      'webhooks:read',
      operations.filter((op) => op.scope === 'webhooks:read'),
    );
    await filter.fill('');
    expect((await shownOperations()).sidebar).toHaveLength(operations.length);
  });

  test('the Admin tab shows the admin API, each operation with a curl and a @platform/client sample of its own', async () => {
    await page.goto(`${gatewayUrl}/docs#/admin`);
    await serviceTitle(page, reference('admin').title).waitFor();
    const samples = await page.locator('#reference section.operation').evaluateAll((sections) =>
      sections.map((s) => ({
        id: s.id,
        curl: s.querySelector('[data-sample="curl"] pre')?.textContent ?? '',
        client: s.querySelector('[data-sample="client"] pre')?.textContent ?? '',
      })),
    );
    expect(samples.map((s) => s.id).sort()).toEqual(sectionIds(reference('admin').operations));
    for (const { id, curl, client } of samples) {
      expect({ id, curl: curl.includes(`'${gatewayUrl}/admin/v1/workspaces`), token: curl.includes('$PLATFORM_ADMIN_TOKEN') }).toEqual({
        id,
        curl: true,
        token: true,
      });
      expect({ id, client: client.includes('createAdminClient(') }).toEqual({ id, client: true });
    }
    const create = page.locator('section#op-createWorkspace');
    await create.locator('[data-sample="curl"] pre').scrollIntoViewIfNeeded();
    expect(await create.locator('[data-sample="curl"] pre').isVisible()).toBe(true);
    expect(await create.locator('[data-sample="client"] pre').isVisible()).toBe(true);
    await screenshot(page, 'docs-admin-samples.png', { fullPage: false });
  });

  test('curl samples work as pasted into a shell: the admin one creates a workspace, the events ones create and list events with its key', async () => {
    const curlOf = async (service: string, operationId: string): Promise<string> => {
      await page.goto(`${gatewayUrl}/docs#/${service}/op/${operationId}`);
      const pre = page.locator(`section#op-${operationId} [data-sample="curl"] pre`);
      await pre.waitFor();
      return (await pre.textContent())!;
    };
    // Each sample as it is, with curl told to print the status after the body.
    const paste = async (sample: string, env: Record<string, string>): Promise<{ status: number; body: any }> => {
      const { stdout } = await promisify(execFile)('bash', ['-c', `${sample} -s -w '\n%{http_code}'`], { env: { PATH: process.env.PATH!, ...env } });
      const lines = stdout.trimEnd().split('\n');
      const status = Number(lines.pop());
      return { status, body: JSON.parse(lines.join('\n')) };
    };

    const workspace = await paste(await curlOf('admin', 'createWorkspace'), { PLATFORM_ADMIN_TOKEN: adminToken });
    expect(workspace.status).toBe(201);
    const key = await fetch(`${gatewayUrl}/admin/v1/workspaces/${workspace.body.id}/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'docs samples' }),
    });
    expect(key.status).toBe(201);
    const env = { PLATFORM_API_KEY: ((await key.json()) as { token: string }).token };

    const eventsOperation = (method: string) => reference('events').operations.find((op) => op.method === method && op.path === '/events')!.id;
    const create = await curlOf('events', eventsOperation('post'));
    const created = await paste(create, env);
    expect(created.status).toBe(201);
    // The sample sends a fresh Idempotency-Key: pasted again, it creates another event rather than replaying the first.
    const again = await paste(create, env);
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(created.body.id);
    const listed = await paste(await curlOf('events', eventsOperation('get')), env);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((event: { id: string }) => event.id).sort()).toEqual([created.body.id, again.body.id].sort());
  });

  test('a malformed address (#/events/op/%E0) shows the service it names, without a page error', async () => {
    const problemsBefore = browser.problems.length;
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${gatewayUrl}/docs#/events/op/%E0`);
      await serviceTitle(tab, reference('events').title).waitFor();
      // The same address reached from an open page (a hashchange, not a load).
      await tab.goto(`${gatewayUrl}/docs#/warehouse/op/%E0`);
      await serviceTitle(tab, reference('warehouse').title).waitFor();
    } finally {
      await tab.close();
    }
    expect(browser.problems.slice(problemsBefore)).toEqual([]);
  });

  test('no CSP or Trusted Types violation, no script error and no request to another origin happened', () => {
    expect(browser.problems).toEqual([]);
    expect(browser.otherOrigins).toEqual([]);
  });
});
