import { z } from 'zod';
import type { FieldError } from '@platform/core';
import type { ConnectorPolicy, DestinationConnector, SourceConnector } from './connector';
import { httpJsonSource } from './http-json';
import { postgresDestination } from './postgres';
import { sampleSource } from './sample';

export * from './connector';
export * from './policy';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySource = SourceConnector<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDestination = DestinationConnector<any>;

export const SOURCES = { sample: sampleSource, 'http-json': httpJsonSource } as const satisfies Record<string, AnySource>;
export const DESTINATIONS = { postgres: postgresDestination } as const satisfies Record<string, AnyDestination>;

export type SourceName = keyof typeof SOURCES;
export type DestinationName = keyof typeof DESTINATIONS;

const SOURCE_NAMES = Object.keys(SOURCES) as [SourceName, ...SourceName[]];
const DESTINATION_NAMES = Object.keys(DESTINATIONS) as [DestinationName, ...DestinationName[]];

export function sourceConnector(name: string): AnySource {
  const connector = (SOURCES as Record<string, AnySource>)[name];
  if (!connector) throw new Error(`unknown source connector ${name}`);
  return connector;
}

export function destinationConnector(name: string): AnyDestination {
  const connector = (DESTINATIONS as Record<string, AnyDestination>)[name];
  if (!connector) throw new Error(`unknown destination connector ${name}`);
  return connector;
}

/**
 * `{ connector, config }` validated against the named connector's config schema; an unknown
 * connector is `invalid_enum` on `connector`, config problems are reported under `config.`.
 * The output config carries the connector's defaults.
 */
function connectorSpec<const N extends string>(names: [N, ...N[]], lookup: (name: N) => AnySource | AnyDestination) {
  return z.strictObject({ connector: z.enum(names), config: z.unknown().optional() }).transform((spec, ctx) => {
    const parsed = lookup(spec.connector).config.safeParse(spec.config ?? {});
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: ['config', ...issue.path] });
      return z.NEVER;
    }
    return { connector: spec.connector, config: parsed.data as Record<string, unknown> };
  });
}

export const SourceSpec = connectorSpec(SOURCE_NAMES, sourceConnector);
export const DestinationSpec = connectorSpec(DESTINATION_NAMES, destinationConnector);

/**
 * What the connectors refuse beyond their config schemas (a non-public address, a platform
 * database), as a 400's field errors; nothing when both pass.
 */
export async function verifyConnectors(
  pipeline: { source: { connector: string; config: unknown }; destination: { connector: string; config: unknown } },
  policy: ConnectorPolicy,
): Promise<FieldError[]> {
  const sides = [
    ['source', sourceConnector(pipeline.source.connector), pipeline.source.config],
    ['destination', destinationConnector(pipeline.destination.connector), pipeline.destination.config],
  ] as const;
  const errors: FieldError[] = [];
  for (const [side, connector, config] of sides) {
    for (const problem of (await connector.verify?.(config, policy)) ?? []) {
      errors.push({ in: 'body', field: `${side}.config.${problem.field}`, code: problem.code, message: problem.message });
    }
  }
  return errors;
}

type Branches = [z.ZodObject, z.ZodObject, ...z.ZodObject[]] | [z.ZodObject];

/** One `{ connector, config }` branch per connector, with that connector's config schema (for the API reference). */
function documentedSpecs<const N extends string>(
  names: N[],
  lookup: (name: N) => AnySource | AnyDestination,
  io: 'input' | 'output',
): z.ZodType<{ connector: N; config: Record<string, unknown> }> {
  const branches = names.map((name) =>
    io === 'input'
      ? z.strictObject({ connector: z.literal(name), config: lookup(name).config.optional() })
      : z.object({ connector: z.literal(name), config: lookup(name).config }),
  ) as unknown as Branches;
  const schema = branches.length === 1 ? branches[0] : z.discriminatedUnion('connector', branches as [z.ZodObject, z.ZodObject, ...z.ZodObject[]]);
  return schema as unknown as z.ZodType<{ connector: N; config: Record<string, unknown> }>;
}

/**
 * SourceSpec and DestinationSpec as the API reference shows them: one branch per connector with
 * its config schema. (The validating schemas check `connector` first, so that an unknown one is
 * `invalid_enum` on `connector`, then the config; the document says the same in one schema.)
 */
export const DocumentedSourceSpec = documentedSpecs(SOURCE_NAMES, sourceConnector, 'input');
export const DocumentedDestinationSpec = documentedSpecs(DESTINATION_NAMES, destinationConnector, 'input');
/** `source` and `destination` of a pipeline as the API returns them (configs with their defaults, secrets masked). */
export const RenderedSourceSpec = documentedSpecs(SOURCE_NAMES, sourceConnector, 'output');
export const RenderedDestinationSpec = documentedSpecs(DESTINATION_NAMES, destinationConnector, 'output');

/** `{ connector, config }` as the API shows it, secrets masked. */
export function renderConnector(connector: AnySource | AnyDestination, config: unknown): { connector: string; config: unknown } {
  return { connector: connector.name, config: connector.render ? connector.render(config) : config };
}
