import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * `forward`: normal service; `refuse`: new connections are accepted and closed at once;
 * `blackhole`: connections are accepted and nothing passes in either direction (nor on open ones).
 */
export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

/** `request`: client to target; `response`: target to client. */
export type ProxyDirection = 'request' | 'response';

export interface TcpProxy {
  /** The loopback port it listens on. */
  port: number;
  mode(): ProxyMode;
  /** Destroys every open connection at once (both sides, RST): a dropped connection mid-request. */
  cut(): number;
  setMode(mode: ProxyMode): void;
  /**
   * Holds the next `chunks` chunks (default 1) that pass in `direction` (default either) for `ms`,
   * on whichever connection they come; later chunks of the same connection and direction wait
   * behind them, as TCP keeps order. A slow server (or network) for one command, without a cut.
   */
  delay(ms: number, options?: { chunks?: number; direction?: ProxyDirection }): void;
  /** Chunks held by `delay` so far (a test waits for this to know the delay has hit). */
  delayedChunks(): number;
  close(): Promise<void>;
}

/** The fault proxy: a TCP proxy on 127.0.0.1 in front of `target` that a test cuts, refuses, blackholes, delays and restores. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  const pairs = new Set<[Socket, Socket]>();
  const pendingDelays: { ms: number; direction: ProxyDirection | undefined }[] = [];
  let delayedChunks = 0;
  const takeDelay = (direction: ProxyDirection): number | undefined => {
    const i = pendingDelays.findIndex((d) => d.direction === undefined || d.direction === direction);
    if (i < 0) return undefined;
    delayedChunks++;
    return pendingDelays.splice(i, 1)[0]!.ms;
  };
  const server: Server = createServer((client) => {
    if (mode === 'refuse') return void client.destroy();
    const upstream = createConnection(target);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket, direction: ProxyDirection) => {
      // Chunks waiting behind a delayed one, each with the time it may go.
      const held: { chunk: Buffer; at: number }[] = [];
      let timer: NodeJS.Timeout | undefined;
      const release = (): void => {
        timer = undefined;
        while (held.length > 0 && held[0]!.at <= Date.now()) {
          const { chunk } = held.shift()!;
          if (mode !== 'blackhole' && !to.destroyed) to.write(chunk);
        }
        if (held.length > 0) timer = setTimeout(release, held[0]!.at - Date.now());
      };
      from.on('data', (chunk: Buffer) => {
        // In blackhole mode bytes are swallowed: both ends wait for an answer that never comes.
        if (mode === 'blackhole') return;
        const ms = pendingDelays.length > 0 ? takeDelay(direction) : undefined;
        if (ms === undefined && held.length === 0) {
          if (!to.destroyed) to.write(chunk);
          return;
        }
        held.push({ chunk, at: Math.max(Date.now() + (ms ?? 0), held.length > 0 ? held[held.length - 1]!.at : 0) });
        if (!timer) timer = setTimeout(release, held[0]!.at - Date.now());
      });
      from.on('close', () => clearTimeout(timer));
    };
    forward(client, upstream, 'request');
    forward(upstream, client, 'response');
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
    delay(ms, options = {}) {
      for (let i = 0; i < (options.chunks ?? 1); i++) pendingDelays.push({ ms, direction: options.direction });
    },
    delayedChunks: () => delayedChunks,
    async close() {
      cut();
      await stopListening();
    },
  };
}
