import { z } from 'zod';
import { resource } from './resource';

const Params = z.object({ id: z.string() });
const Endpoint = z.object({ id: z.string(), url: z.string() });

describe('resource', () => {
  test('retrieve: get<Name>, "Retrieve a/an <name>", 200 with the resource, 404 when the workspace has none', () => {
    const endpoint = resource({ name: 'webhook endpoint', params: Params, schema: Endpoint });
    expect(endpoint.retrieve()).toEqual({
      params: Params,
      docs: {
        operationId: 'getWebhookEndpoint',
        summary: 'Retrieve a webhook endpoint',
        responses: { 200: { description: 'The webhook endpoint.', schema: Endpoint } },
        errors: { 404: 'No webhook endpoint with this id in the workspace.' },
      },
    });
    const item = resource({ name: 'item', params: Params, schema: Endpoint, tag: 'Stock' });
    const headers = { ETag: { description: 'The version.' } };
    expect(item.retrieve(headers).docs).toMatchObject({ summary: 'Retrieve an item', tag: 'Stock', responses: { 200: { headers } } });
  });

  test('route: the resource params, its 404 and tag unless the route says otherwise, its other errors kept', () => {
    const run = resource({ name: 'run', params: Params, schema: Endpoint, notFound: 'No such run.', tag: 'Runs' });
    const Body = z.strictObject({});
    const declared = run.route({
      body: Body,
      docs: { operationId: 'cancelRun', summary: 'Cancel a run', responses: { 200: { description: 'The run.' } }, errors: { 409: 'Already ended.' } },
    });
    expect(declared).toEqual({
      body: Body,
      params: Params,
      docs: {
        operationId: 'cancelRun',
        summary: 'Cancel a run',
        tag: 'Runs',
        responses: { 200: { description: 'The run.' } },
        errors: { 404: 'No such run.', 409: 'Already ended.' },
      },
    });
    const own = run.route({ docs: { operationId: 'x', summary: 'x', tag: 'Other', responses: {}, errors: { 404: 'Own.' } } });
    expect(own.docs).toMatchObject({ tag: 'Other', errors: { 404: 'Own.' } });
    expect(run.route({ query: Body })).toEqual({ query: Body, params: Params });
  });
});
