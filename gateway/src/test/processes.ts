import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { spawnDeployable, TEST_REDIS_COMMAND_TIMEOUT_MS, testDatabaseUrl, type ReadyProcess } from '@platform/testing';
import type { Upstreams } from '../proxy';

const GATEWAY_ENTRY = join(__dirname, '..', '..', 'dist', 'main.js');

export interface GatewayProcess extends ReadyProcess {
  adminToken: string;
  /** An /admin/v1 call with the admin token; resolves with the status and JSON body. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** The built gateway (`node dist/main.js`) as a real process on free ports and the test database, ready. */
export async function spawnGateway(upstreams: Upstreams, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const gateway = await spawnDeployable(GATEWAY_ENTRY, 'GATEWAY_PORT', {
    GATEWAY_DATABASE_URL: testDatabaseUrl('gateway'),
    PLATFORM_ADMIN_TOKEN: adminToken,
    EVENTS_URL: upstreams.events,
    WAREHOUSE_URL: upstreams.warehouse,
    PIPELINES_URL: upstreams.pipelines,
    LOG_LEVEL: 'info',
    REDIS_COMMAND_TIMEOUT_MS: String(TEST_REDIS_COMMAND_TIMEOUT_MS),
    ...env,
  });
  return {
    ...gateway,
    adminToken,
    admin: async (method, path, body) => {
      const res = await fetch(`${gateway.url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}
