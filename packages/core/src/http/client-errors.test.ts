import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { answerClientErrors } from './client-errors';

async function start(): Promise<Server> {
  // Like every handler here, it answers once the whole body is in.
  const server = createServer({ headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 }, (req, res) => {
    req.resume().on('end', () => res.end('handled'));
  });
  answerClientErrors(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** Sends raw bytes and reads until the server closes the connection. */
async function raw(server: Server, bytes: string): Promise<string> {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.write(bytes);
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  await once(socket, 'close');
  return answer;
}

function parse(answer: string): { status: number; headers: Record<string, string>; body: { error: Record<string, unknown> } } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

describe('what node refuses before a handler runs gets the contract error body (contract section 2)', () => {
  let server: Server;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a client too slow to send its headers gets 408 request_timeout with the usual headers', async () => {
    const answer = parse(await raw(server, 'POST /x HTTP/1.1\r\nHost: a\r\n'));
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatchObject({ code: 'request_timeout', request_id: answer.headers['x-request-id'] });
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'platform-version': '2024-12-01',
      'x-content-type-options': 'nosniff',
      connection: 'close',
    });
  });

  test('a client too slow to send its body gets 408 as well', async () => {
    const answer = parse(await raw(server, 'POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n{"a"'));
    expect(answer.status).toBe(408);
    expect(answer.body.error.code).toBe('request_timeout');
  });

  test('malformed HTTP is 400 invalid_request with the error body', async () => {
    const answer = parse(await raw(server, 'NOT HTTP AT ALL\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_request');
  });
});
