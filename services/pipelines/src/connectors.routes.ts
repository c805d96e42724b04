import type pg from 'pg';
import { z } from 'zod';
import { invalidRequest, listOf, route, type RouteDeclaration, type RouteDefinition } from '@platform/core';
import {
  DESTINATIONS,
  DestinationSpec,
  SOURCES,
  SourceSpec,
  destinationConnector,
  sourceConnector,
  type CheckResult,
  type ConnectorPolicy,
  type ConnectorRuntime,
} from './connectors';
import { requiredEnum } from './validation';
import type { WorkspaceId } from '@platform/core';

/** The longest a check may take, DNS, connect and read together (under the gateway's 10 s upstream timeout). */
export const CONNECTOR_CHECK_TIMEOUT_MS = 8_000;

/** A check reads at most this much of an http-json answer. */
const CHECK_MAX_BYTES = 50 * 1024 * 1024;

const CONNECTOR_KINDS = ['source', 'destination'] as const;

/** JSON Schema 2020-12 of a connector's config: zod's own conversion of the schema POST /pipelines validates with. */
export function configJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });
}

export const ConnectorInfo = z
  .object({
    name: z.string(),
    kind: z.enum(CONNECTOR_KINDS),
    description: z.string(),
    config_schema: z.record(z.string(), z.unknown()).meta({
      description: "JSON Schema (2020-12) of the connector's `config`, generated from the schema `POST /pipelines` validates it with.",
    }),
  })
  .meta({
    id: 'Connector',
    description: 'A connector a pipeline may use as its source or destination.',
    examples: [
      {
        name: 'sample',
        kind: 'source',
        description: 'Generated records (up to 100,000, deterministic per seed), for trying pipelines without an external system.',
        config_schema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { records: { default: 100, type: 'integer', minimum: 1, maximum: 100000 } },
          additionalProperties: false,
        },
      },
    ],
  });
export type ConnectorInfo = z.infer<typeof ConnectorInfo>;

const ConnectorList = listOf(ConnectorInfo, 'ConnectorList');

/** The catalog: every connector with its config's JSON Schema (no pages: `next_cursor` is always null). */
export function connectorCatalog(): ConnectorInfo[] {
  return [...Object.values(SOURCES), ...Object.values(DESTINATIONS)].map((connector) => ({
    name: connector.name,
    kind: connector.kind,
    description: connector.description,
    config_schema: configJsonSchema(connector.config),
  }));
}

/**
 * `{ kind, connector, config }`: a bad kind is `invalid_enum` on `kind`; the connector and its
 * config are validated as `source`/`destination` are on POST /pipelines (an unknown connector
 * `invalid_enum` on `connector`, config problems under `config.`). All three are required
 * (contract section 14), so an empty body names all three in one 400; a connector whose config
 * has only defaults takes `{}`.
 */
export const CheckConnectorBody = z
  .strictObject({ kind: requiredEnum(CONNECTOR_KINDS), connector: z.unknown(), config: z.unknown() })
  .transform((body, ctx) => {
    const spec = (body.kind === 'source' ? SourceSpec : DestinationSpec).safeParse({ connector: body.connector, config: body.config });
    if (!spec.success) {
      for (const issue of spec.error.issues) ctx.addIssue({ ...issue });
      return z.NEVER;
    }
    return { kind: body.kind, connector: spec.data.connector, config: spec.data.config };
  });

const DocumentedCheckConnectorBody = z.strictObject({
  kind: z.enum(CONNECTOR_KINDS),
  connector: z.enum([...Object.keys(SOURCES), ...Object.keys(DESTINATIONS)] as [string, ...string[]]).meta({ description: 'A connector of that kind.' }),
  config: z.record(z.string(), z.unknown()).meta({ description: "The connector's config (its `config_schema` in `GET /connectors`)." }),
});

export const CheckResultSchema = z
  .object({
    status: z.enum(['succeeded', 'failed']),
    message: z.string().meta({ description: "What the check found, in the platform's words (never a driver's, never what a name resolved to)." }),
  })
  .meta({ id: 'ConnectorCheck', examples: [{ status: 'succeeded', message: 'Connected; the table sample_records is ready.' }] });

export const connectorRouteDeclarations = {
  'GET /connectors': {
    docs: {
      operationId: 'listConnectors',
      summary: 'List the connectors',
      tag: 'Connectors',
      description:
        "Every source and destination connector with a one-line description and its config's JSON Schema (2020-12), generated from the same schema `POST /pipelines` validates configs with. One page: `next_cursor` is always null.",
      responses: { 200: { description: 'The connectors.', schema: ConnectorList } },
    },
  },
  'POST /connectors/check': {
    body: CheckConnectorBody,
    docs: {
      operationId: 'checkConnector',
      summary: 'Check a connector config',
      tag: 'Connectors',
      description:
        "Tries a config as a run would, within 8 s in all (DNS, connect, read; under the gateway's 10 s upstream timeout). `sample` always succeeds; `http-json`: the URL answers 2xx with JSON holding an array at `records_path` (without it, the body itself is the array); `postgres`: it connects and creates the table in a transaction it rolls back, so nothing is left behind (without `connection_url`, in the workspace's own schema). " +
        'A config that `POST /pipelines` would refuse is 400 with the same codes, fields named from this body (`config.table`); a bad `kind` or an unknown connector is `invalid_enum`. ' +
        "An address that is not public (unless the platform runs with `CONNECTORS_ALLOW_PRIVATE=true`), an answer that is not what a run needs, or no answer in time is `failed`, with a message in the platform's words.",
      body: DocumentedCheckConnectorBody,
      responses: { 200: { description: 'What the check found.', schema: CheckResultSchema } },
      requestExample: { kind: 'destination', connector: 'postgres', config: { table: 'sample_records' } },
    },
  },
} satisfies Record<string, RouteDeclaration>;

export interface ConnectorCheckDeps {
  /** What connector configs may reach (the same policy as POST /pipelines). */
  policy: ConnectorPolicy;
  /** The API's own pool on the pipelines database (postgres checks without connection_url). */
  pool: pg.Pool;
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
  const runtime: ConnectorRuntime = { ...deps.policy, defaultPool: deps.pool, httpTimeoutMs: timeoutMs, httpMaxBytes: CHECK_MAX_BYTES };
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

/** The connector routes wired to the catalog and the check. */
export function connectorRouteDefinitions(deps: ConnectorCheckDeps): Record<keyof typeof connectorRouteDeclarations, RouteDefinition> {
  return {
    'GET /connectors': route(connectorRouteDeclarations['GET /connectors'], () =>
      Promise.resolve({ status: 200, body: { data: connectorCatalog(), next_cursor: null } }),
    ),
    'POST /connectors/check': route(connectorRouteDeclarations['POST /connectors/check'], async ({ identity, body }) => ({
      status: 200,
      body: await checkConnector(deps, identity.workspaceId, body),
    })),
  };
}
