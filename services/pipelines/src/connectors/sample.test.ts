import { firstSampleAfter, sampleRecord, sampleSource, SampleConfig } from './sample';
import type { ConnectorRuntime } from './connector';

async function readAll(config: SampleConfig, since: Date | null, batchSize = 7) {
  const batches = [];
  for await (const batch of sampleSource.read(config, { since, batchSize, signal: new AbortController().signal, runtime: {} as ConnectorRuntime }))
    batches.push(batch);
  return batches;
}

describe('sample source', () => {
  test('record i is sample-<seed>-<i>, updated 2024-01-01T00:00:00.000Z + i seconds, and the same on every read', () => {
    expect(sampleRecord(42, 3)).toMatchObject({ id: 'sample-42-3', seq: 3, updated_at: '2024-01-01T00:00:03.000Z' });
    expect(sampleRecord(42, 3)).toEqual(sampleRecord(42, 3));
    expect(sampleRecord(42, 3).value).not.toBe(sampleRecord(43, 3).value);
  });

  test('config: records 1..100000 (default 100), seed an integer (default 0), nothing else', () => {
    expect(SampleConfig.parse({})).toEqual({ records: 100, seed: 0 });
    for (const bad of [{ records: 0 }, { records: 100_001 }, { records: 1.5 }, { seed: 'x' }, { rows: 3 }]) {
      expect(SampleConfig.safeParse(bad).success).toBe(false);
    }
  });

  test('reads every record in batches when since is null', async () => {
    const batches = await readAll({ records: 20, seed: 1 }, null);
    expect(batches.map((b) => b.length)).toEqual([7, 7, 6]);
    expect(batches.flat().map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => `sample-1-${i + 1}`));
  });

  test('only records updated strictly after since are read', async () => {
    expect(firstSampleAfter(new Date('2023-12-31T00:00:00Z'))).toBe(1);
    expect(firstSampleAfter(new Date('2024-01-01T00:00:05.000Z'))).toBe(6);
    expect(firstSampleAfter(new Date('2024-01-01T00:00:05.999Z'))).toBe(6);
    const records = (await readAll({ records: 20, seed: 1 }, new Date('2024-01-01T00:00:15Z'))).flat();
    expect(records.map((r) => r.seq)).toEqual([16, 17, 18, 19, 20]);
    expect(await readAll({ records: 20, seed: 1 }, new Date('2025-01-01T00:00:00Z'))).toEqual([]);
  });
});
