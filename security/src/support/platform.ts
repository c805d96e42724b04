import { startPlatform, startRedisServer, type Platform, type RedisServer } from '@platform/testing';
import type { ServiceName } from '@platform/core';
import { send, type Answer, type SendOptions } from './http';

/** The gateway's limits for slow clients in the battery's platform (read by gateway/src/config.ts). */
export const GATEWAY_HEADERS_TIMEOUT_MS = 1_000;
export const GATEWAY_REQUEST_TIMEOUT_MS = 4_000;
/** The smallest interval schedule in the battery's platform (the neighbours category ticks every second; the default is 60 s). */
export const SCHEDULE_MIN_INTERVAL_S = 1;

/** Every API key of a tenant is unrestricted; requests go round the keys so no bucket's limit is met. */
const KEYS_PER_TENANT = 12;

export interface Battlefield {
  platform: Platform;
  redis: RedisServer;
  documents: Record<ServiceName, Record<string, any>>;
  admin(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  stop(): Promise<void>;
}

/**
 * The real built platform (gateway, the three services, the worker; real PostgreSQL) on a Redis
 * of its own, started by the launcher the drills use. Private addresses are refused (no
 * WEBHOOKS_ALLOW_PRIVATE / CONNECTORS_ALLOW_PRIVATE), and slow clients meet short timeouts.
 */
export async function startBattlefield(): Promise<Battlefield> {
  const redis = await startRedisServer();
  let platform: Platform;
  try {
    platform = await startPlatform({
      name: 'security',
      redisUrl: redis.url,
      // Two cores shared with other builds can take longer than the launcher's 30 s to start a process.
      startTimeoutMs: 90_000,
      env: {
        GATEWAY_HEADERS_TIMEOUT_MS: String(GATEWAY_HEADERS_TIMEOUT_MS),
        GATEWAY_REQUEST_TIMEOUT_MS: String(GATEWAY_REQUEST_TIMEOUT_MS),
        PIPELINES_SCHEDULE_MIN_INTERVAL_S: String(SCHEDULE_MIN_INTERVAL_S),
      },
    });
  } catch (err) {
    await redis.stop();
    throw err;
  }
  const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    send(platform.gatewayUrl, { method, path, body, headers: { authorization: `Bearer ${platform.adminToken}`, ...headers } });
  const documents = {} as Record<ServiceName, Record<string, any>>;
  for (const service of ['events', 'warehouse', 'pipelines'] as const) {
    const answer = await send(platform.gatewayUrl, { path: `/docs/${service}.json` });
    if (answer.status !== 200 || !answer.json) throw new Error(`GET /docs/${service}.json: ${answer.status} ${answer.text.slice(0, 200)}`);
    documents[service] = answer.json;
  }
  return {
    platform,
    redis,
    documents,
    admin,
    stop: async () => {
      await platform.stop();
      await redis.stop();
    },
  };
}

/** A workspace as a client sees it: its keys, and calls through the gateway with one of them. */
export interface Tenant {
  name: string;
  workspaceId: string;
  keyIds: string[];
  /** The next key's token (round robin). */
  token(): string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>, options?: Partial<SendOptions>): Promise<Answer>;
}

export interface TenantOptions {
  /** How many keys the requests go round (default 12). */
  keys?: number;
  /** Each key's own limits per bucket (contract section 16); default: the platform's. */
  rateLimits?: Record<string, number>;
}

export async function createTenant(field: Battlefield, name: string, options: TenantOptions = {}): Promise<Tenant> {
  const workspace = await field.admin('POST', '/admin/v1/workspaces', { name: `security ${name}` });
  if (workspace.status !== 201) throw new Error(`creating workspace ${name}: ${workspace.status} ${workspace.text}`);
  const workspaceId = workspace.json.id as string;
  const keys: { id: string; token: string }[] = [];
  for (let i = 0; i < (options.keys ?? KEYS_PER_TENANT); i++) {
    const key = await field.admin('POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, { name: `${name} ${i}`, rate_limits: options.rateLimits });
    if (key.status !== 201) throw new Error(`creating a key of ${name}: ${key.status} ${key.text}`);
    keys.push({ id: key.json.id, token: key.json.token });
  }
  let next = 0;
  const token = () => keys[next++ % keys.length]!.token;
  return {
    name,
    workspaceId,
    keyIds: keys.map((k) => k.id),
    token,
    call: (method, path, body, headers = {}, options = {}) =>
      send(field.platform.gatewayUrl, { ...options, method, path, body, headers: { authorization: `Bearer ${token()}`, ...headers } }),
  };
}

/** Throws with the answer when a set-up call did not get the status it needs. */
export function expectStatus(answer: Answer, status: number, what: string): Answer {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.error ?? answer.text.slice(0, 300)}`);
  return answer;
}
