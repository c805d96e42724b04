import net from 'node:net';

/**
 * A TCP relay in front of Redis that a test can cut (connections refused), black-hole
 * (connections accepted, nothing answered) and restore, to play an outage or a slow Redis.
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let mode: 'pass' | 'blackhole' = 'pass';
  let server: net.Server | undefined;
  let port = 0;

  const open = async (): Promise<void> => {
    server = net.createServer((client) => {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => undefined);
      const upstream = net.connect(target.port, target.host);
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('data', (chunk) => {
        if (mode === 'pass') upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (mode === 'pass') client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as net.AddressInfo).port;
  };
  await open();

  return {
    get url(): string {
      return `redis://127.0.0.1:${port}`;
    },
    /** Drops every connection and refuses new ones. */
    async cut(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
    /** Listens again on the same port. */
    restore: open,
    blackhole(on: boolean): void {
      mode = on ? 'blackhole' : 'pass';
    },
    async close(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      if (server?.listening) await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
  };
}
