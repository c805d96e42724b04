import { EVENT_TYPES, undocumentedRoutes } from '@platform/core';
import { expectValidOpenApi, openApiValidator } from '@platform/testing';
import { warehouseApiDocument } from './warehouse.openapi';

const document = warehouseApiDocument();

describe('the warehouse API document', () => {
  test('every contract route has an operation with a summary, its scope and a success answer', () => {
    expect(undocumentedRoutes(document, 'warehouse')).toEqual([]);
  });

  test('is valid OpenAPI 3.1', async () => {
    await expectValidOpenApi(document);
  });

  test('every example matches the schema it illustrates', () => {
    expect(openApiValidator(document as never).exampleProblems()).toEqual([]);
  });

  test('item bodies are documented from the schemas items.service parses them with; bulk has its own bucket', () => {
    const patch = document.paths['/items/{id}']!.patch!;
    expect(JSON.stringify(patch.requestBody)).toContain('"sku"');
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: 'If-Match', in: 'header', required: false }));
    expect(patch.responses!['200']!.headers!.ETag).toBeDefined();
    expect(document.paths['/items/bulk']!.post!['x-rate-limit-bucket']).toBe('warehouse-bulk');
    // The warehouse's webhook events, in the order of the one list of event types.
    expect(Object.keys(document.webhooks ?? {})).toEqual(EVENT_TYPES.filter((type) => /^(item|reservation)\./.test(type)));
    for (const path of ['/items/{id}/transfers', '/items/{id}/reservations', '/reservations/{id}/commit', '/reservations/{id}/release']) {
      expect(document.paths[path]!.post!['x-rate-limit-bucket']).toBe('warehouse');
    }
  });
});
