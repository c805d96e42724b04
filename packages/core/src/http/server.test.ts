import { once } from 'node:events';
import { Agent, createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createLogger } from '../process/logger';
import { closeServer, listen } from './server';

/** One GET on `agent`; resolves with the status and the Connection header. */
function get(port: number, agent: Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    })
      .once('error', reject)
      .end();
  });
}

describe('closeServer', () => {
  test('waits for the answer in flight, then closes its keep-alive connection at once instead of after the idle timeout', async () => {
    let answer: (() => void) | undefined;
    const server = createServer((_req, res) => {
      answer = () => res.end('ok');
    });
    // Beyond the test's own timeout: a close that waited for the idle timeout could only fail.
    server.keepAliveTimeout = 600_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    try {
      const inFlight = get(port, agent);
      while (!answer) await new Promise((resolve) => setTimeout(resolve, 5));

      let closed = false;
      const closing = closeServer(server).then(() => (closed = true));
      // Once the port refuses new connections the close is under way; it still waits for the answer.
      await expect(once(connect(port, '127.0.0.1'), 'connect')).rejects.toThrow(/ECONNREFUSED/);
      expect(closed).toBe(false);
      answer();
      expect((await inFlight).status).toBe(200);
      await closing;
    } finally {
      agent.destroy();
    }
  });

  test('a request that arrives on an open connection while closing is answered with Connection: close', async () => {
    let arrived = 0;
    const server = createServer((_req, res) => {
      arrived++;
      setTimeout(() => res.end('ok'), 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    // Two pipelined requests on one keep-alive connection, the second sent once the server is closing
    // (while the first is still in flight, so the connection is never idle in between).
    socket.write('GET /1 HTTP/1.1\r\nHost: x\r\n\r\n');
    while (arrived === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = closeServer(server);
    socket.write('GET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
    await closing;
    await ended;
    const connections = [...received.matchAll(/^connection: (.*)\r$/gim)].map((m) => m[1]!.toLowerCase());
    expect(connections).toEqual(['keep-alive', 'close']);
  });
});

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * Addresses of this machine other than 127.0.0.1: another loopback address (Linux answers all of
 * 127/8 on lo) and every non-loopback IPv4 interface.
 */
function otherLocalAddresses(): string[] {
  const external = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4' && !i.internal)
    .map((i) => i!.address);
  return [...(process.platform === 'linux' ? ['127.0.0.2'] : []), ...external];
}

describe('listen', () => {
  const silent = createLogger('server-test', 'silent');
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await closeServer(server);
    server = undefined;
  });

  test('without a host it listens on 127.0.0.1 only: no other address of this machine reaches it', async () => {
    server = listen((_req, res) => res.end('ok'), 0, silent, 'test');
    await once(server, 'listening');
    const { address, port } = server.address() as AddressInfo;
    expect(address).toBe('127.0.0.1');
    expect(await accepts('127.0.0.1', port)).toBe(true);
    const others = otherLocalAddresses();
    expect(others.length).toBeGreaterThan(0);
    for (const other of others) expect([other, await accepts(other, port)]).toEqual([other, false]);
  });

  test('HOST 0.0.0.0 (containers) listens on every interface', async () => {
    server = listen((_req, res) => res.end('ok'), 0, silent, 'test', '0.0.0.0');
    await once(server, 'listening');
    const { address, port } = server.address() as AddressInfo;
    expect(address).toBe('0.0.0.0');
    for (const other of otherLocalAddresses()) expect([other, await accepts(other, port)]).toEqual([other, true]);
  });
});
