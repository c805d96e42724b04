import { openApiDocument, WEBHOOK_ENDPOINT_ROUTES, undocumentedRoutes } from '@platform/core';
import { expectValidOpenApi, openApiValidator } from '@platform/testing';
import { webhookRouteDeclarations } from './endpoints.routes';

// Every service mounts these routes; documented once here, they appear in each service's document.
const document = openApiDocument({
  service: 'events',
  title: 'Webhook endpoints',
  version: 'test',
  routes: webhookRouteDeclarations,
});

describe('the webhook endpoint routes in an API document', () => {
  test('every webhook route has an operation with a summary, its scope and a success answer', () => {
    const undocumented = undocumentedRoutes(document, 'events').filter((key) => key in WEBHOOK_ENDPOINT_ROUTES);
    expect(undocumented).toEqual([]);
  });

  test('they make a valid OpenAPI 3.1 document whose examples match their schemas', async () => {
    await expectValidOpenApi(document);
    expect(openApiValidator(document as never).exampleProblems()).toEqual([]);
  });

  test('the secret is documented on creation and rotation only', () => {
    const schemaOf = (method: 'post' | 'get', path: string, status: string) =>
      document.paths[path]![method]!.responses![status]!.content!['application/json']!.schema;
    expect(schemaOf('post', '/webhook-endpoints', '201')).toEqual({ $ref: '#/components/schemas/WebhookEndpointWithSecret' });
    expect(schemaOf('post', '/webhook-endpoints/{id}/rotate-secret', '200')).toEqual({ $ref: '#/components/schemas/WebhookEndpointWithSecret' });
    expect(schemaOf('get', '/webhook-endpoints/{id}', '200')).toEqual({ $ref: '#/components/schemas/WebhookEndpoint' });
  });
});
