import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { runService } from './run-process';

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('runService', () => {
  const signalHandlers = new Map<string, (signal: string) => void>();
  let exit: jest.SpyInstance;
  let on: jest.SpyInstance;

  beforeEach(() => {
    signalHandlers.clear();
    const register = process.on.bind(process);
    on = jest.spyOn(process, 'on').mockImplementation((event: string | symbol, listener: (...args: unknown[]) => void) => {
      if (event === 'SIGTERM' || event === 'SIGINT') signalHandlers.set(event, listener);
      else register(event, listener);
      return process;
    });
    exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
  });
  afterEach(() => {
    on.mockRestore();
    exit.mockRestore();
  });

  test('on SIGTERM: the API stops, then the service drains (its own steps, then webhooks) while scrapes go on, then the database, then its own connections', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const seen: string[] = [];
    const record = (step: string) => async () => {
      seen.push(`${step}: api ${(await accepts(port)) ? 'open' : 'closed'}, metrics ${(await accepts(metricsPort)) ? 'open' : 'closed'}`);
    };
    runService({
      service: 'events',
      config: {
        LOG_LEVEL: 'silent',
        HOST: '127.0.0.1',
        METRICS_PORT: metricsPort,
        REDIS_URL: 'redis://127.0.0.1:1',
        PLATFORM_INTERNAL_SECRET: 'x'.repeat(32),
        WEBHOOKS_ALLOW_PRIVATE: false,
      },
      port,
      database: { $disconnect: record('database') },
      createStores: () => ({ ping: () => Promise.resolve() }),
      startWebhooks: () => ({ ping: () => Promise.resolve(), close: record('webhooks') }),
      createApp: () => ({
        app: (_req, res) => res.end(),
        drain: [{ name: 'runs queue', run: record('runs queue') }],
        disconnect: [{ name: 'redis', run: record('redis') }],
      }),
    });
    for (let i = 0; i < 100 && !signalHandlers.has('SIGTERM'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await accepts(port)).toBe(true);
    expect(await accepts(metricsPort)).toBe(true);

    signalHandlers.get('SIGTERM')!('SIGTERM');
    for (let i = 0; i < 200 && exit.mock.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen).toEqual([
      'runs queue: api closed, metrics open',
      'webhooks: api closed, metrics open',
      'database: api closed, metrics closed',
      'redis: api closed, metrics closed',
    ]);
    expect(exit).toHaveBeenCalledWith(0);
  });
});
