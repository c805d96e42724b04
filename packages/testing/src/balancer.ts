import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A round-robin TCP balancer on a loopback port in front of a service's instances, as a
 * Kubernetes Service or a cloud load balancer is in production: each new connection goes to the
 * next instance, and an instance that refuses it (killed, restarting) is skipped.
 */
export interface Balancer {
  port: number;
  url: string;
  /** Connections forwarded so far, per target port. */
  forwarded(): Record<number, number>;
  /** Stops listening and destroys every open connection; idempotent. */
  close(): Promise<void>;
}

/** Starts a balancer on `port` (default: a free one) over the loopback ports `targets()` names at each connection. */
export async function startBalancer(options: { port?: number; targets: () => number[] }): Promise<Balancer> {
  const open = new Set<Socket>();
  const forwarded: Record<number, number> = {};
  let connections = 0;

  /** Connects `client` to ports[first], or the next one that accepts; destroys it when none does. */
  const connectToAny = (ports: number[], first: number, attempt: number, client: Socket): void => {
    if (client.destroyed) return;
    if (attempt >= ports.length) return void client.destroy();
    const port = ports[(first + attempt) % ports.length]!;
    const upstream = createConnection({ host: '127.0.0.1', port });
    open.add(upstream);
    const refused = () => {
      open.delete(upstream);
      upstream.destroy();
      connectToAny(ports, first, attempt + 1, client);
    };
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      forwarded[port] = (forwarded[port] ?? 0) + 1;
      const close = () => {
        open.delete(upstream);
        client.destroy();
        upstream.destroy();
      };
      upstream.on('error', close).on('close', close);
      client.on('error', close).on('close', close);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };

  const server = createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    connectToAny(options.targets(), connections++, 0, client);
  });
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', () => (server.off('error', reject), resolve())),
  );
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  let closed: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    forwarded: () => ({ ...forwarded }),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      })),
  };
}
