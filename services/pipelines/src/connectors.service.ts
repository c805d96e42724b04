import { z } from 'zod';
import { invalidRequest, type WorkspaceId } from '@platform/core';
import { DESTINATIONS, SOURCES, destinationConnector, sourceConnector, type CheckResult, type ConnectorPolicy } from './connectors';
import type { ConnectorsStore } from './connectors.store';
import type { ConnectorInfo } from './pipelines.resources';

/** The longest a check may take, DNS, connect and read together (under the gateway's 10 s upstream timeout). */
export const CONNECTOR_CHECK_TIMEOUT_MS = 8_000;

/** A check reads at most this much of an http-json answer. */
const CHECK_MAX_BYTES = 50 * 1024 * 1024;

/** JSON Schema 2020-12 of a connector's config: zod's own conversion of the schema POST /pipelines validates with. */
export function configJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });
}

/** The catalog: every connector with its config's JSON Schema (no pages: `next_cursor` is always null). */
export function connectorCatalog(): ConnectorInfo[] {
  return [...Object.values(SOURCES), ...Object.values(DESTINATIONS)].map((connector) => ({
    name: connector.name,
    kind: connector.kind,
    description: connector.description,
    config_schema: configJsonSchema(connector.config),
  }));
}

export interface ConnectorCheckDeps {
  /** What connector configs may reach (the same policy as POST /pipelines). */
  policy: ConnectorPolicy;
  /** The pipelines database through the API's own pool (postgres checks without connection_url). */
  store: ConnectorsStore;
  /** The check's deadline; CONNECTOR_CHECK_TIMEOUT_MS unless a test shortens it. */
  timeoutMs?: number;
}

/** `work`, or the signal's reason once it is aborted, whichever comes first (work that goes on finishes in the background). */
function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Checks a validated config: the connector's own problems beyond its schema (as on POST
 * /pipelines, 400), but a non-public address is a `failed` check; then the connector's check,
 * all of it within one deadline.
 */
export async function checkConnector(
  deps: ConnectorCheckDeps,
  workspaceId: WorkspaceId,
  body: { kind: 'source' | 'destination'; connector: string; config: unknown },
): Promise<CheckResult> {
  const timeoutMs = deps.timeoutMs ?? CONNECTOR_CHECK_TIMEOUT_MS;
  const connector = body.kind === 'source' ? sourceConnector(body.connector) : destinationConnector(body.connector);
  const signal = AbortSignal.timeout(timeoutMs);
  const runtime = deps.store.runtime({ ...deps.policy, httpTimeoutMs: timeoutMs, httpMaxBytes: CHECK_MAX_BYTES });
  const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
  try {
    return await beforeDeadline(
      (async (): Promise<CheckResult> => {
        const problems = (await connector.verify?.(body.config, deps.policy)) ?? [];
        const refused = problems.filter((problem) => problem.code !== 'private_address');
        if (refused.length > 0) {
          throw invalidRequest(refused.map((problem) => ({ in: 'body', field: `config.${problem.field}`, code: problem.code, message: problem.message })));
        }
        const privateAddress = problems.find((problem) => problem.code === 'private_address');
        if (privateAddress) return { status: 'failed', message: `config.${privateAddress.field} ${privateAddress.message}` };
        return connector.check(body.config, { workspaceId, runtime, signal });
      })(),
      signal,
    );
  } catch (err) {
    if (signal.aborted) return { status: 'failed', message: `the check did not finish within ${seconds}` };
    throw err;
  }
}
