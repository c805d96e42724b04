import { createServer, type Server } from 'node:http';
import { startBalancer } from './balancer';

function startInstance(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.setHeader('connection', 'close').end(name));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port })));
}

test('each new connection goes to the next instance; a stopped instance is skipped, no request fails', async () => {
  const a = await startInstance('a');
  const b = await startInstance('b');
  const balancer = await startBalancer({ targets: () => [a.port, b.port] });
  try {
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(await (await fetch(balancer.url, { headers: { connection: 'close' } })).text());
    expect(answers).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(balancer.forwarded()).toEqual({ [a.port]: 3, [b.port]: 3 });

    await new Promise((resolve) => a.server.close(resolve));
    for (let i = 0; i < 4; i++) expect(await (await fetch(balancer.url, { headers: { connection: 'close' } })).text()).toBe('b');
  } finally {
    await balancer.close();
    b.server.close();
  }
});
