import { z } from 'zod';
import type { SourceConnector, SourceRecord } from './connector';

export const SampleConfig = z.strictObject({
  records: z.number().int().min(1).max(100_000).default(100),
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).default(0),
});
export type SampleConfig = z.output<typeof SampleConfig>;

/** Record 1 is updated one second after this instant, record i i seconds after it. */
export const SAMPLE_EPOCH = Date.parse('2024-01-01T00:00:00.000Z');

/** A deterministic 32-bit value per (seed, i) (a small integer hash), so runs are reproducible. */
function sampleValue(seed: number, i: number): number {
  let h = Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(i, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Record i (1-based) of a sample source. */
export function sampleRecord(seed: number, i: number): SourceRecord {
  return {
    id: `sample-${seed}-${i}`,
    seq: i,
    name: `Sample record ${i}`,
    value: sampleValue(seed, i) % 1000,
    updated_at: new Date(SAMPLE_EPOCH + i * 1000).toISOString(),
  };
}

/** The first record updated strictly after `since`. */
export function firstSampleAfter(since: Date | null): number {
  if (!since) return 1;
  return Math.max(1, Math.floor((since.getTime() - SAMPLE_EPOCH) / 1000) + 1);
}

/** Generated records, for trying pipelines without an external system. */
export const sampleSource: SourceConnector<SampleConfig> = {
  kind: 'source',
  name: 'sample',
  description: 'Generated records (up to 100,000, deterministic per seed), for trying pipelines without an external system.',
  config: SampleConfig,
  check: (config) =>
    Promise.resolve({ status: 'succeeded', message: `The sample source generates ${config.records} records; there is nothing to connect to.` }),
  // eslint-disable-next-line @typescript-eslint/require-await -- connectors read an AsyncIterable; the sample has nothing to wait for
  async *read(config, { since, batchSize }) {
    for (let start = firstSampleAfter(since); start <= config.records; start += batchSize) {
      const end = Math.min(config.records, start + batchSize - 1);
      const batch: SourceRecord[] = [];
      for (let i = start; i <= end; i++) batch.push(sampleRecord(config.seed, i));
      yield batch;
    }
  },
};
