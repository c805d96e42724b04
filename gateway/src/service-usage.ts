import {
  INTERNAL_USAGE_PATH,
  SERVICES,
  ServiceUsage,
  serviceSigningKey,
  signedIdentityHeaders,
  temporarilyUnavailable,
  type ApiError,
  type Logger,
  type ServiceName,
} from '@platform/core';
import type { UpstreamProxy } from './proxy';
import type { ReadWorkspaceUsage } from './quotas.service';

/** The key id of the gateway's own signed calls: no API key makes them, the operator with the admin token does. */
export const ADMIN_KEY_ID = 'admin';

const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

export interface WorkspaceUsageDeps {
  proxy: Pick<UpstreamProxy, 'call'>;
  internalSecret: string;
  /** The bytes of the workspace's stored idempotent answers, as the idempotency store counts them. */
  idempotencyBytes: (workspaceId: string) => Promise<number>;
  logger: Logger;
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What a workspace uses now: each service's count from its internal usage route, called on the
 * service's own address with a request signed for it (the workspace, the admin's key id, every
 * scope), and the idempotency store's bytes. A service that cannot be reached, is slower than the
 * gateway timeout or gives no usable answer makes the whole read the contract's 503.
 */
export function workspaceUsageReader(deps: WorkspaceUsageDeps): ReadWorkspaceUsage {
  const signingKeys = Object.fromEntries(SERVICE_NAMES.map((service) => [service, serviceSigningKey(deps.internalSecret, service)])) as Record<
    ServiceName,
    Buffer
  >;
  const unavailable = (service: ServiceName, why: Record<string, unknown>, requestId: string): ApiError => {
    deps.logger.warn({ service, request_id: requestId, ...why }, 'workspace usage unavailable');
    return temporarilyUnavailable(`The ${service} service did not give the workspace's usage in time; retry.`);
  };

  async function serviceUsage(service: ServiceName, workspaceId: string, requestId: string): Promise<ServiceUsage> {
    const headers = signedIdentityHeaders(signingKeys[service], {
      method: 'GET',
      pathAndQuery: INTERNAL_USAGE_PATH,
      workspaceId,
      keyId: ADMIN_KEY_ID,
      scopes: null,
      requestId,
    });
    let answer: { status: number; body: string };
    try {
      answer = await deps.proxy.call(service, 'GET', INTERNAL_USAGE_PATH, headers);
    } catch (err) {
      const { name, code, message } = err as { name?: string; code?: string; message?: string };
      throw unavailable(service, { err: { name, code, message } }, requestId);
    }
    if (answer.status !== 200) throw unavailable(service, { status: answer.status }, requestId);
    const parsed = ServiceUsage.safeParse(parsedJson(answer.body));
    if (!parsed.success) throw unavailable(service, { problem: 'answer not understood', body: answer.body.slice(0, 200) }, requestId);
    return parsed.data;
  }

  return async (workspaceId, requestId) => {
    const [events, warehouse, pipelines, idempotencyBytes] = await Promise.all([
      serviceUsage('events', workspaceId, requestId),
      serviceUsage('warehouse', workspaceId, requestId),
      serviceUsage('pipelines', workspaceId, requestId),
      deps.idempotencyBytes(workspaceId).catch((err: unknown) => {
        deps.logger.warn({ err, request_id: requestId }, 'idempotency storage usage unavailable');
        throw temporarilyUnavailable("The workspace's idempotency storage could not be counted; retry.");
      }),
    ]);
    if (pipelines.pipelines === undefined || pipelines.scheduled_pipelines === undefined) {
      throw unavailable('pipelines', { problem: 'no pipelines or scheduled_pipelines in its answer' }, requestId);
    }
    return {
      pipelines: pipelines.pipelines,
      scheduled_pipelines: pipelines.scheduled_pipelines,
      webhook_endpoints: { events: events.webhook_endpoints, warehouse: warehouse.webhook_endpoints, pipelines: pipelines.webhook_endpoints },
      idempotency_bytes: idempotencyBytes,
    };
  };
}
