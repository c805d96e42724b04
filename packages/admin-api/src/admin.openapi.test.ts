import { validate } from '@readme/openapi-parser';
import { ADMIN_ROUTES, parseRouteKey, openApiPath } from '@platform/core';
import { adminApiDocument } from './admin.openapi';

describe('adminApiDocument', () => {
  test('is valid OpenAPI 3.1 and documents every admin route with a success answer', async () => {
    const doc = adminApiDocument();
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    for (const key of Object.keys(ADMIN_ROUTES)) {
      const { method, path } = parseRouteKey(key);
      const operation = doc.paths[openApiPath(path)]?.[method.toLowerCase()];
      expect({ key, summary: operation?.summary, ok: Object.keys(operation?.responses ?? {}).some((s) => s.startsWith('2')) }).toEqual({
        key,
        summary: expect.any(String),
        ok: true,
      });
    }
  });

  test('operations take the admin token: no scope, bucket, rate-limit headers or Idempotency-Key', () => {
    const operation = adminApiDocument().paths['/workspaces/{id}/api-keys']!.post!;
    expect(operation.security).toEqual([{ adminToken: [] }]);
    expect(operation['x-required-scope']).toBeUndefined();
    expect(operation.parameters).not.toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(Object.keys(operation.responses!['201']!.headers!)).toEqual(['x-request-id', 'platform-version']);
    expect(Object.keys(operation.responses!)).not.toContain('403');
    expect(operation.responses!['201']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ApiKeyWithToken' });
  });
});
