import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * `forward`: normal service; `refuse`: new connections are accepted and closed at once;
 * `blackhole`: connections are accepted and nothing passes in either direction (nor on open ones).
 */
export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

export interface TcpProxy {
  /** The loopback port it listens on. */
  port: number;
  mode(): ProxyMode;
  /** Destroys every open connection at once (both sides, RST): a dropped connection mid-request. */
  cut(): number;
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

/** The fault proxy: a TCP proxy on 127.0.0.1 in front of `target` that a test cuts, refuses, blackholes and restores. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    if (mode === 'refuse') return void client.destroy();
    const upstream = createConnection(target);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        // In blackhole mode bytes are swallowed: both ends wait for an answer that never comes.
        if (mode !== 'blackhole' && !to.destroyed) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => (server.off('error', reject), resolve())));
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  await listen(0);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const cut = (): number => {
    const n = pairs.size;
    for (const pair of [...pairs]) {
      // resetAndDestroy sends RST: the peer sees ECONNRESET, not a clean FIN. A socket already
      // ending (its peer sent FIN, e.g. Redis answering QUIT) cannot be reset: libuv refuses, and
      // Node then drops the handle without closing it, which keeps the process (and jest) alive.
      for (const socket of pair) {
        if (socket.writableEnded) socket.destroy();
        else socket.resetAndDestroy();
      }
    }
    pairs.clear();
    return n;
  };
  return {
    port,
    mode: () => mode,
    cut,
    setMode(next) {
      mode = next;
    },
    async close() {
      cut();
      await stopListening();
    },
  };
}
