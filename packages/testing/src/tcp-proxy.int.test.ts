import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';
import { waitFor } from './wait';

let echo: Server;
let echoPort: number;
/** Everything the echo server received, in order. */
let received: string;

beforeAll(async () => {
  echo = createServer((socket) =>
    socket
      .on('data', (chunk: Buffer) => ((received += chunk.toString()), socket.write(chunk)))
      // The proxy's close resets its connections.
      .on('error', () => socket.destroy()),
  );
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** A client through the proxy, with what it has read so far and when each byte arrived. */
async function connect(proxy: TcpProxy) {
  const socket: Socket = createConnection({ host: '127.0.0.1', port: proxy.port }).on('error', () => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const read = { text: '', at: new Map<string, number>() };
  socket.on('data', (chunk: Buffer) => {
    for (const char of chunk.toString()) read.at.set(char, Date.now());
    read.text += chunk.toString();
  });
  return { socket, read };
}

describe('the fault proxy delays traffic without cutting it', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    received = '';
    proxy = await startTcpProxy({ host: '127.0.0.1', port: echoPort });
  });
  afterEach(async () => {
    await proxy.close();
  });

  test('a delayed answer arrives after the delay, and what follows it waits behind it in order', async () => {
    const { socket, read } = await connect(proxy);
    socket.write('a');
    await waitFor('the undelayed echo', () => read.text === 'a');

    proxy.delay(300, { direction: 'response' });
    const sent = Date.now();
    socket.write('b');
    await waitFor('the server to receive b at once (only answers are delayed)', () => received === 'ab');
    expect(read.text).toBe('a');
    socket.write('c');
    await waitFor('both delayed echoes', () => read.text === 'abc');
    expect(read.at.get('b')! - sent).toBeGreaterThanOrEqual(290);
    expect(read.at.get('c')!).toBeGreaterThanOrEqual(read.at.get('b')!);
    expect(proxy.delayedChunks()).toBe(1);

    // One chunk only: the next one passes at once again.
    socket.write('d');
    await waitFor('the undelayed echo after the delay', () => read.text === 'abcd');
    expect(proxy.delayedChunks()).toBe(1);
    socket.destroy();
  });

  test('a delayed request reaches the server late, with the request behind it kept in order', async () => {
    const { socket, read } = await connect(proxy);
    proxy.delay(200, { direction: 'request', chunks: 1 });
    const sent = Date.now();
    socket.write('x');
    await waitFor('the delay to take the chunk', () => proxy.delayedChunks() === 1);
    socket.write('y');
    await waitFor('both echoes', () => read.text === 'xy');
    expect(received).toBe('xy');
    expect(read.at.get('x')! - sent).toBeGreaterThanOrEqual(190);
    socket.destroy();
  });
});
