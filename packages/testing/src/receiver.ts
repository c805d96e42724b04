import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, as a receiver must verify them. */
  body: string;
}

/**
 * What the receiver answers: a status, `hang` (never answer), a redirect, or a held answer: `status`
 * once `until` resolves (a slow receiver that the test releases; a request the client has given up
 * on by then gets nothing).
 */
export type Answer = number | 'hang' | { redirect: string } | { until: Promise<unknown>; status: number };

/** A real HTTP receiver on 127.0.0.1 for integration tests; answers per path follow a script. */
export async function startReceiver() {
  const received: Received[] = [];
  const scripts = new Map<string, Answer[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const script = scripts.get(path) ?? [];
      // Answers are used in order; the last one repeats.
      const answer = (script.length > 1 ? script.shift() : script[0]) ?? 204;
      if (answer === 'hang') return;
      if (typeof answer === 'object' && 'until' in answer) {
        void answer.until.then(() => {
          if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok');
        });
        return;
      }
      if (typeof answer === 'object') res.writeHead(302, { location: answer.redirect }).end();
      else res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    url: (path: string) => `${base}${path}`,
    answer(path: string, ...answers: Answer[]) {
      scripts.set(path, answers);
    },
    at: (path: string) => received.filter((r) => r.path === path),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** An app under test with a receiver for its webhook deliveries; `close()` stops both. */
export type WithReceiver<App> = App & { receiver: Receiver };

/** Starts a receiver beside an app (a service test app started with its webhooks runtime). */
export async function withReceiver<App extends { close(): Promise<void> }>(starting: Promise<App>): Promise<WithReceiver<App>> {
  const app = await starting;
  const receiver = await startReceiver().catch(async (err: unknown) => {
    await app.close();
    throw err;
  });
  return {
    ...app,
    receiver,
    close: async () => {
      await app.close();
      await receiver.close();
    },
  };
}
