import { validate } from '@readme/openapi-parser';
import { ADMIN_ROUTES, DEFAULT_WORKSPACE_LIMITS, parseRouteKey, openApiPath, QUOTA_NAMES, SERVICES } from '@platform/core';
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

  test('the quotas answer: stored values or null, the limits in force, and usage with webhook_endpoints per service (contract section 20)', () => {
    const doc = adminApiDocument();
    const operation = doc.paths['/workspaces/{id}/quotas']!.patch!;
    expect(operation.responses!['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/WorkspaceQuotas' });
    expect(Object.keys(operation.responses!)).toEqual(expect.arrayContaining(['404', '503']));
    const quotas = doc.components.schemas.WorkspaceQuotas as any;
    for (const name of QUOTA_NAMES) {
      expect(quotas.properties[name].anyOf).toEqual([{ type: 'integer', minimum: 0 }, { type: 'null' }]);
      expect(quotas.properties.limits.properties[name].type).toBe('integer');
    }
    expect(quotas.properties.usage.properties.webhook_endpoints.required).toEqual(Object.keys(SERVICES));
    const body = (operation.requestBody as any).content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(body.properties)).toEqual([...QUOTA_NAMES]);
  });

  test('creating a key, and rolling one, document the API keys limit: 409 with the quota_exceeded body of "api_keys" at the default limit', () => {
    const doc = adminApiDocument();
    for (const operation of [doc.paths['/workspaces/{id}/api-keys']!.post!, doc.paths['/workspaces/{id}/api-keys/{key_id}/roll']!.post!]) {
      const example = (operation.responses!['409']!.content!['application/json'] as { example: { error: Record<string, unknown> } }).example.error;
      expect(example).toMatchObject({
        code: 'conflict',
        quota: 'api_keys',
        limit: DEFAULT_WORKSPACE_LIMITS.api_keys,
        errors: [{ in: 'body', field: '', code: 'quota_exceeded', message: expect.any(String) }],
      });
      expect(operation.responses!['409']!.description).toContain('GATEWAY_WORKSPACE_MAX_API_KEYS');
    }
  });
});
