import { undocumentedRoutes } from '@platform/core';
import { expectValidOpenApi, openApiValidator } from '@platform/testing';
import { pipelinesApiDocument } from './pipelines.openapi';

const document = pipelinesApiDocument();

describe('the pipelines API document', () => {
  test('every contract route has an operation with a summary, its scope and a success answer', () => {
    expect(undocumentedRoutes(document, 'pipelines')).toEqual([]);
  });

  test('is valid OpenAPI 3.1', async () => {
    await expectValidOpenApi(document);
  });

  test('every example matches the schema it illustrates', () => {
    expect(openApiValidator(document as never).exampleProblems()).toEqual([]);
  });

  test('each connector is documented with its own config schema; run triggers have their own bucket and a Location header', () => {
    const validator = openApiValidator(document as never);
    const body = (source: object) => ({ name: 'x', source, destination: { connector: 'postgres', config: { table: 'rows' } } });
    expect(validator.requestProblems('POST', '/pipelines', body({ connector: 'sample', config: { records: 10 } }))).toEqual([]);
    expect(validator.requestProblems('POST', '/pipelines', body({ connector: 'sample', config: { url: 'https://example.com' } }))).not.toEqual([]);
    expect(validator.requestProblems('POST', '/pipelines', body({ connector: 'ftp' }))).not.toEqual([]);
    const trigger = document.paths['/pipelines/{id}/runs']!.post!;
    expect(trigger['x-rate-limit-bucket']).toBe('pipeline-runs');
    expect(trigger.responses!['202']!.headers!.Location).toBeDefined();
    expect(validator.requestProblems('POST', '/pipelines/{id}/runs', { trigger: 'nightly' })).not.toEqual([]);
  });

  test('creates and schedule changes document the 409 of a quota they would pass (contract section 20)', () => {
    const conflict = (method: 'post' | 'patch', path: string) => document.paths[path]![method]!.responses!['409']!.description;
    expect(conflict('post', '/pipelines')).toContain('`scheduled_pipelines`');
    expect(conflict('post', '/pipelines')).toContain('quota_exceeded');
    expect(conflict('patch', '/pipelines/{id}')).toContain('`scheduled_pipelines`');
    expect(conflict('post', '/webhook-endpoints')).toContain('`webhook_endpoints`');
  });
});
