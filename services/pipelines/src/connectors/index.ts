import { z } from 'zod';
import { requiredEnum } from '../validation';
import type { DestinationConnector, SourceConnector } from './connector';
import { httpJsonSource } from './http-json';
import { postgresDestination } from './postgres';
import { sampleSource } from './sample';

export * from './connector';

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
  return z
    .strictObject({ connector: z.enum(names), config: z.unknown().optional() })
    .transform((spec, ctx) => {
      const parsed = lookup(spec.connector).config.safeParse(spec.config ?? {});
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: ['config', ...issue.path] } as Parameters<typeof ctx.addIssue>[0]);
        return z.NEVER;
      }
      return { connector: spec.connector, config: parsed.data as Record<string, unknown> };
    });
}

export const SourceSpec = connectorSpec(SOURCE_NAMES, sourceConnector);
export const DestinationSpec = connectorSpec(DESTINATION_NAMES, destinationConnector);

/** `{ connector, config }` as the API shows it, secrets masked. */
export function renderConnector(connector: AnySource | AnyDestination, config: unknown): { connector: string; config: unknown } {
  return { connector: connector.name, config: connector.render ? connector.render(config) : config };
}
