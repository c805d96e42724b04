import { PlatformApiError, retryingFetch, unwrap } from '@platform/client';
import { NETWORK_ERROR_MESSAGE, reportOf } from './messages.format';

/** The error the client throws for this answer (openapi-fetch hands over the body parsed, or its text). */
async function errorFor(response: Response): Promise<PlatformApiError> {
  const text = await response.clone().text();
  const body = text.startsWith('{') ? JSON.parse(text) : text;
  const error = await unwrap({ error: body, response }).catch((err: unknown) => err);
  if (!(error instanceof PlatformApiError)) throw new Error(`not a PlatformApiError: ${String(error)}`);
  return error;
}

describe('reportOf', () => {
  test("the platform's message, every problem as field: message, and the request id", async () => {
    const error = await errorFor(
      Response.json(
        {
          error: {
            code: 'invalid_request',
            message: 'The request is invalid.',
            request_id: 'req-1',
            errors: [
              { in: 'body', field: 'name', code: 'required', message: 'is required' },
              { in: 'body', field: '', code: 'invalid_json', message: 'The body is not JSON.' },
            ],
          },
        },
        { status: 400 },
      ),
    );
    expect(reportOf(error)).toEqual({ message: 'The request is invalid.', problems: ['name: is required', 'The body is not JSON.'], requestId: 'req-1' });
  });

  test('no answer after the retries: the console says the gateway could not be reached', async () => {
    const send = retryingFetch(() => Promise.reject(new TypeError('Failed to fetch')), { maxRetries: 0 });
    const error = await send(new Request('http://gateway.test/admin/v1/workspaces')).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 0, code: 'network_error' });
    expect(reportOf(error as PlatformApiError)).toEqual({ message: NETWORK_ERROR_MESSAGE, problems: [], requestId: undefined });
  });

  test("an answer that is not the platform's error body (a proxy's page) says the status, with the x-request-id it carried", async () => {
    const error = await errorFor(new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'x-request-id': 'req-2' } }));
    expect(reportOf(error)).toEqual({ message: 'The gateway answered 502 Bad Gateway.', problems: [], requestId: 'req-2' });
  });
});
