import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

export interface TcpProxy {
  port: number;
  mode(): ProxyMode;
  /** Destroys every open connection at once (both sides): a dropped connection mid-request. */
  cut(): number;
  /**
   * `refuse`: new connections are closed at once; `blackhole`: they are accepted and nothing
   * passes in either direction (nor on open ones); `forward`: normal service.
   */
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 in front of `target`, which a drill cuts, blackholes and restores. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  if (target.host !== '127.0.0.1' && target.host !== 'localhost') throw new Error('drills proxy loopback only');
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const cut = (): number => {
    const n = pairs.size;
    for (const pair of [...pairs]) {
      // resetAndDestroy sends RST: the peer sees ECONNRESET, not a clean FIN.
      for (const socket of pair) socket.resetAndDestroy();
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
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
