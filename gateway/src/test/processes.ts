import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePorts, processRedisUrl, spawnProcess, TEST_INTERNAL_SECRET, testDatabaseUrl, waitForHttp, type SpawnedProcess } from '@platform/testing';
import type { Upstreams } from '../proxy';

const GATEWAY_ENTRY = join(__dirname, '..', '..', 'dist', 'main.js');

export interface GatewayProcess {
  proc: SpawnedProcess;
  url: string;
  metricsUrl: string;
  adminToken: string;
  /** An /admin/v1 call with the admin token; resolves with the status and JSON body. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** The built gateway (`node dist/main.js`) as a real process on free ports and the test database, ready. */
export async function spawnGateway(upstreams: Upstreams, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const [port, metricsPort] = await freePorts(2);
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const proc = spawnProcess(GATEWAY_ENTRY, {
    GATEWAY_PORT: String(port),
    METRICS_PORT: String(metricsPort),
    GATEWAY_DATABASE_URL: testDatabaseUrl('gateway'),
    REDIS_URL: processRedisUrl(),
    PLATFORM_ADMIN_TOKEN: adminToken,
    PLATFORM_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    EVENTS_URL: upstreams.events,
    WAREHOUSE_URL: upstreams.warehouse,
    PIPELINES_URL: upstreams.pipelines,
    LOG_LEVEL: 'info',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, { process: proc });
  return {
    proc,
    url,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    adminToken,
    admin: async (method, path, body) => {
      const res = await fetch(`${url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}
