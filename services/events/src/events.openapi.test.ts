import { undocumentedRoutes } from '@platform/core';
import { expectValidOpenApi, openApiValidator } from '@platform/testing';
import { eventsApiDocument } from './events.openapi';

const document = eventsApiDocument();

describe('the events API document', () => {
  test('every contract route has an operation with a summary, its scope and a success answer', () => {
    expect(undocumentedRoutes(document, 'events')).toEqual([]);
  });

  test('is valid OpenAPI 3.1', async () => {
    await expectValidOpenApi(document);
  });

  test('every example matches the schema it illustrates', () => {
    expect(openApiValidator(document as never).exampleProblems()).toEqual([]);
  });

  test('requests go through the gateway prefix; the ticket.validated webhook carries the ticket', () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: '/events/v0' })]);
    expect(document.webhooks?.['ticket.validated']?.post?.requestBody).toBeDefined();
    expect(document.paths['/tickets/{id}/validate']?.post?.responses?.['409']?.description).toContain('original validation');
  });
});
