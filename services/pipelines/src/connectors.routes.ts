import { z } from 'zod';
import { route, type RouteDeclaration, type RouteDefinition } from '@platform/core';
import { DESTINATIONS, DestinationSpec, SOURCES, SourceSpec } from './connectors';
import { checkConnector, connectorCatalog, type ConnectorCheckDeps } from './connectors.service';
import { CONNECTOR_KINDS, ConnectorCheck, ConnectorList } from './pipelines.resources';
import { requiredEnum } from './validation';

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
      responses: { 200: { description: 'What the check found.', schema: ConnectorCheck } },
      requestExample: { kind: 'destination', connector: 'postgres', config: { table: 'sample_records' } },
    },
  },
} satisfies Record<string, RouteDeclaration>;

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
