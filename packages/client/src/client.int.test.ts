import { randomUUID } from 'node:crypto';
import { startReceiver, startTcpProxy, waitFor } from '@platform/testing';
import { createClient, paginate, PlatformApiError, unwrap } from './index';
import { admin, gateway, newWorkspace } from './test/platform';
import { verifyWebhook, webhookSecret } from './webhooks';

test("the README's example: validate a ticket, trigger a run and wait for it", async () => {
  const { token } = await newWorkspace('readme');
  const setup = createClient({ baseUrl: gateway().url, apiKey: token });
  const event = await unwrap(setup.events.POST('/events', { body: { name: 'Gala', starts_at: '2030-06-01T20:00:00Z', ends_at: '2030-06-01T23:00:00Z' } }));
  const ticketId = (await unwrap(setup.events.POST('/events/{id}/tickets', { params: { path: { id: event.id } }, body: { holder_name: 'Ada' } }))).id;
  const pipelineId = (
    await unwrap(
      setup.pipelines.POST('/pipelines', {
        body: { name: 'nightly', source: { connector: 'sample', config: { records: 5 } }, destination: { connector: 'postgres', config: { table: 'readme' } } },
      }),
    )
  ).id;

  // The README's lines, as they are there.
  const platform = createClient({ baseUrl: gateway().url, apiKey: token });
  const ticket = await unwrap(platform.events.POST('/tickets/{id}/validate', { params: { path: { id: ticketId } } }));
  let run = await unwrap(platform.pipelines.POST('/pipelines/{id}/runs', { params: { path: { id: pipelineId } }, body: { trigger: 'manual' } }));
  while (run.status === 'queued' || run.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 500));
    run = await unwrap(platform.pipelines.GET('/pipelines/{id}/runs/{run_id}', { params: { path: { id: pipelineId, run_id: run.id } } }));
  }

  expect(ticket).toMatchObject({ ticket_id: ticketId, status: 'validated' });
  expect(run).toMatchObject({ status: 'succeeded' });
});

test('paginate walks a list of several pages to its end', async () => {
  const { client } = await newWorkspace('pages');
  const platform = client();
  const codes = ['A', 'B', 'C', 'D', 'E'];
  for (const code of codes) await unwrap(platform.warehouse.POST('/locations', { body: { name: `Aisle ${code}`, code } }));
  const seen: string[] = [];
  let pages = 0;
  for await (const location of paginate((cursor) => (pages++, platform.warehouse.GET('/locations', { params: { query: { limit: 2, cursor } } })))) {
    seen.push(location.code);
  }
  expect(seen.sort()).toEqual(codes);
  expect(pages).toBe(3);
});

test('a 400, a 404 and a 403 are thrown as PlatformApiError with code, errors[], request_id and status', async () => {
  const { client } = await newWorkspace('errors', { scopes: ['items:read'] });
  const platform = client();
  const failure = (call: Promise<unknown>) =>
    call.then(
      () => undefined,
      (err: unknown) => err as PlatformApiError,
    );

  const invalid = await failure(unwrap(platform.warehouse.GET('/items', { params: { query: { limit: 1000 } } })));
  expect(invalid).toBeInstanceOf(PlatformApiError);
  expect(invalid).toMatchObject({ status: 400, code: 'invalid_request', errors: [expect.objectContaining({ in: 'query', field: 'limit' })] });
  expect(invalid!.requestId).toMatch(/\S/);

  const missing = await failure(unwrap(platform.warehouse.GET('/items/{id}', { params: { path: { id: randomUUID() } } })));
  expect(missing).toMatchObject({ status: 404, code: 'not_found', errors: [] });

  const forbidden = await failure(unwrap(platform.warehouse.POST('/items', { body: { sku: 'S-1', name: 'Shirt' } })));
  expect(forbidden).toMatchObject({ status: 403, code: 'forbidden_scope', details: expect.objectContaining({ required_scope: 'items:write' }) });
});

test("a 429 is retried after the answer's Retry-After, with the same Idempotency-Key", async () => {
  const { workspaceId, keyId, client } = await newWorkspace('limited', { rate_limits: { warehouse: 1 } });
  const waits: number[] = [];
  const keys: (string | null)[] = [];
  const retryAfters: (string | null)[] = [];
  const platform = client({
    maxRetryDelayMs: 120_000,
    fetch: async (request) => {
      keys.push(request.headers.get('idempotency-key'));
      const response = await fetch(request);
      retryAfters.push(response.headers.get('retry-after'));
      return response;
    },
    retry: {
      // Instead of sitting out the minute the key's bucket asks for, the operator raises its limit (as the console would); the client's retry then passes.
      sleep: async (ms) => {
        waits.push(ms);
        await unwrap(
          admin().PATCH('/workspaces/{id}/api-keys/{key_id}', { params: { path: { id: workspaceId, key_id: keyId } }, body: { rate_limits: null } }),
        );
        // The change reaches the gateway through its key-change channel: retry once it has.
        await waitFor('the lifted limit at the gateway', async () => (await client().warehouse.GET('/items')).response.status === 200);
      },
    },
  });
  await unwrap(platform.warehouse.GET('/items'));
  keys.length = 0;
  retryAfters.length = 0;
  const created = await platform.warehouse.POST('/items', { body: { sku: 'LIMITED-1', name: 'Limited' } });
  expect(created.response.status).toBe(201);
  // One wait, of the 429's Retry-After (up to the rest of the minute) plus at most the jitter.
  expect(waits).toHaveLength(1);
  const retryAfterMs = Number(retryAfters[0]) * 1000;
  expect(retryAfterMs).toBeGreaterThan(0);
  expect(retryAfterMs).toBeLessThanOrEqual(60_000);
  expect(waits[0]).toBeGreaterThanOrEqual(retryAfterMs);
  expect(waits[0]).toBeLessThanOrEqual(retryAfterMs + 250);
  expect(keys).toHaveLength(2);
  expect(keys[1]).toBe(keys[0]);
  const listed = await unwrap(platform.warehouse.GET('/items', { params: { query: { sku: 'LIMITED-1' } } }));
  expect(listed.data).toHaveLength(1);
});

test('a request that met a network error is sent again', async () => {
  const { token } = await newWorkspace('network');
  const url = new URL(gateway().url);
  const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
  try {
    proxy.setMode('refuse');
    let tries = 0;
    const platform = createClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      apiKey: token,
      retry: {
        sleep: async () => {
          tries++;
          // The network comes back after the second failure.
          if (tries === 2) proxy.setMode('forward');
          await Promise.resolve();
        },
      },
    });
    const page = await unwrap(platform.warehouse.GET('/locations'));
    expect(page.data).toEqual([]);
    expect(tries).toBe(2);
  } finally {
    await proxy.close();
  }
});

test('a stock adjustment whose answer was lost is retried with the same Idempotency-Key and lands once; the retry gets the first answer', async () => {
  const { token, client } = await newWorkspace('double-apply');
  const setup = client();
  const item = await unwrap(setup.warehouse.POST('/items', { body: { sku: 'TSHIRT-M', name: 'T-shirt' } }));
  await unwrap(setup.warehouse.POST('/items/{id}/stock-adjustments', { params: { path: { id: item.id } }, body: { delta: 10, reason: 'receipt' } }));

  const keys: string[] = [];
  let lost: { adjustment: { id: string } } | undefined;
  const platform = createClient({
    baseUrl: gateway().url,
    apiKey: token,
    retry: { sleep: () => Promise.resolve() },
    // The first answer is lost after the platform applied the request: the connection "breaks" on the way back.
    fetch: async (request) => {
      keys.push(request.headers.get('idempotency-key') ?? '');
      const response = await fetch(request);
      if (!lost) {
        lost = (await response.json()) as typeof lost;
        throw new TypeError('fetch failed: the connection was reset after the request was sent');
      }
      return response;
    },
  });
  const { data, response } = await platform.warehouse.POST('/items/{id}/stock-adjustments', {
    params: { path: { id: item.id } },
    body: { delta: -3, reason: 'sale' },
  });
  expect(keys).toHaveLength(2);
  expect(keys[1]).toBe(keys[0]);
  expect(response.status).toBe(201);
  expect(response.headers.get('idempotent-replayed')).toBe('true');
  expect(data!.adjustment.id).toBe(lost!.adjustment.id);
  expect(data!.item.quantity).toBe(7);
  // 10 - 3 once; applied twice it would be 4.
  const after = await unwrap(setup.warehouse.GET('/items/{id}', { params: { path: { id: item.id } } }));
  expect(after.quantity).toBe(7);
});

test('stock per location through the typed client: transfer, reserve, commit; a second commit is a PlatformApiError with the status beside code', async () => {
  const { client } = await newWorkspace('stock-levels');
  const platform = client();
  const [aisle, shop] = [
    await unwrap(platform.warehouse.POST('/locations', { body: { name: 'Aisle', code: 'AISLE' } })),
    await unwrap(platform.warehouse.POST('/locations', { body: { name: 'Shop', code: 'SHOP' } })),
  ];
  const item = await unwrap(platform.warehouse.POST('/items', { body: { sku: 'MUG', name: 'Mug', location_id: aisle.id } }));
  const path = { params: { path: { id: item.id } } };
  await unwrap(platform.warehouse.POST('/items/{id}/stock-adjustments', { ...path, body: { delta: 10, reason: 'receipt' } }));
  const { transfer } = await unwrap(
    platform.warehouse.POST('/items/{id}/transfers', { ...path, body: { from_location_id: aisle.id, to_location_id: shop.id, quantity: 4 } }),
  );
  expect(transfer).toMatchObject({ from_location_id: aisle.id, to_location_id: shop.id, quantity: 4 });
  const reservation = await unwrap(
    platform.warehouse.POST('/items/{id}/reservations', { ...path, body: { location_id: shop.id, quantity: 3, reference: 'Order 1' } }),
  );
  expect(await unwrap(platform.warehouse.GET('/items/{id}/stock', path))).toEqual({
    item_id: item.id,
    quantity: 10,
    levels: [
      { location_id: aisle.id, on_hand: 6, reserved: 0, available: 6 },
      { location_id: shop.id, on_hand: 4, reserved: 3, available: 1 },
    ].sort((a, b) => a.location_id.localeCompare(b.location_id)),
  });
  const commit = { params: { path: { id: reservation.id } } };
  const committed = await unwrap(platform.warehouse.POST('/reservations/{id}/commit', commit));
  expect(committed.item.quantity).toBe(7);
  expect(committed.reservation.status).toBe('committed');
  const again = await unwrap(platform.warehouse.POST('/reservations/{id}/commit', commit)).catch((err: unknown) => err);
  expect(again).toBeInstanceOf(PlatformApiError);
  expect(again).toMatchObject({
    status: 409,
    code: 'conflict',
    errors: [expect.objectContaining({ code: 'reservation_not_active' })],
    details: expect.objectContaining({ status: 'committed' }),
  });
  expect(
    (await unwrap(platform.warehouse.GET('/items/{id}/reservations', { params: { path: { id: item.id }, query: { status: 'committed' } } }))).data,
  ).toEqual([committed.reservation]);
});

test('verifyWebhook accepts a real delivery of the platform, and both secrets while one is rotated', async () => {
  const { client } = await newWorkspace('webhooks');
  const platform = client();
  const receiver = await startReceiver();
  try {
    const endpoint = await unwrap(platform.events.POST('/webhook-endpoints', { body: { url: receiver.url('/hook'), events: ['ticket.validated'] } }));
    const event = await unwrap(
      platform.events.POST('/events', { body: { name: 'Hooks', starts_at: '2030-06-01T20:00:00Z', ends_at: '2030-06-01T23:00:00Z' } }),
    );
    const ticket = async () =>
      (await unwrap(platform.events.POST('/events/{id}/tickets', { params: { path: { id: event.id } }, body: { holder_name: 'Grace' } }))).id;

    const first = await ticket();
    await unwrap(platform.events.POST('/tickets/{id}/validate', { params: { path: { id: first } } }));
    const delivery = await waitFor('the first delivery', async () => receiver.at('/hook')[0]);
    // The API types the secret as a string: webhookSecret checks it is one and types it so.
    const secret = webhookSecret(endpoint.secret);
    const verified = verifyWebhook<{ id: string }>(delivery.body, delivery.headers, secret);
    expect(verified).toMatchObject({ type: 'ticket.validated', data: expect.objectContaining({ id: first }) });
    expect(() => verifyWebhook(delivery.body.replace(first, randomUUID()), delivery.headers, secret)).toThrow(/signature/i);

    const rotated = await unwrap(platform.events.POST('/webhook-endpoints/{id}/rotate-secret', { params: { path: { id: endpoint.id } } }));
    const second = await ticket();
    await unwrap(platform.events.POST('/tickets/{id}/validate', { params: { path: { id: second } } }));
    const next = await waitFor('the delivery after the rotation', async () => receiver.at('/hook')[1]);
    expect(String(next.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(next.body, next.headers, secret).type).toBe('ticket.validated');
    expect(verifyWebhook(next.body, next.headers, webhookSecret(rotated.secret)).type).toBe('ticket.validated');
  } finally {
    await receiver.close();
  }
});
