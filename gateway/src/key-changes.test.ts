import type { Logger } from '@platform/core';
import { KeyChangeFeed, nextFeedPosition, type FeedPosition } from './key-changes';
import type { KeyChange } from './keys.store';

const change = (seq: number, txid: number): KeyChange => ({ seq: BigInt(seq), txid: BigInt(txid), keyId: `k${seq}`, tokenHash: `h${seq}` });
const start = (horizon: number): FeedPosition => ({ horizon: BigInt(horizon), seen: new Map() });
const FORGET_MS = 60_000;

test('a read that was not cut short moves the horizon to the snapshot xmin and remembers nothing below it', () => {
  const next = nextFeedPosition(start(100), { changes: [change(1, 100), change(2, 104)], xmin: 110n }, 10, 0, FORGET_MS);
  expect(next.horizon).toBe(110n);
  expect([...next.seen.keys()]).toEqual([]);
});

test('rows at or above the xmin (committed while an older transaction was open) are remembered, so the next read skips them', () => {
  // Transaction 103 is still open: 105 committed first. 103 may still write a row, so the horizon stops at it.
  const next = nextFeedPosition(start(100), { changes: [change(1, 101), change(9, 105)], xmin: 103n }, 10, 0, FORGET_MS);
  expect(next.horizon).toBe(103n);
  expect([...next.seen.keys()]).toEqual([9n]);
  // 103 commits (its seq 5 is below 9): read next, and once the horizon passes 105 nothing is remembered.
  const after = nextFeedPosition(next, { changes: [change(5, 103)], xmin: 120n }, 10, 1, FORGET_MS);
  expect(after.horizon).toBe(120n);
  expect([...after.seen.keys()]).toEqual([]);
});

test('a full batch moves the horizon only to its last row’s transaction: later rows of that transaction are still to read', () => {
  const next = nextFeedPosition(start(100), { changes: [change(1, 100), change(2, 101), change(3, 101)], xmin: 200n }, 3, 0, FORGET_MS);
  expect(next.horizon).toBe(101n);
  expect([...next.seen.keys()]).toEqual([2n, 3n]);
});

test('the horizon never moves back', () => {
  const next = nextFeedPosition(start(150), { changes: [], xmin: 140n }, 10, 0, FORGET_MS);
  expect(next.horizon).toBe(150n);
});

test('remembered rows are forgotten once older than the log keeps them', () => {
  const held = nextFeedPosition(start(100), { changes: [change(9, 105)], xmin: 103n }, 10, 0, FORGET_MS);
  expect([...nextFeedPosition(held, { changes: [], xmin: 103n }, 10, FORGET_MS, FORGET_MS).seen.keys()]).toEqual([9n]);
  expect([...nextFeedPosition(held, { changes: [], xmin: 103n }, 10, FORGET_MS + 1, FORGET_MS).seen.keys()]).toEqual([]);
});

/** A log in memory: rows below `xmin` are final; the store's queries as the reader sees them. */
function memoryLog() {
  const rows: KeyChange[] = [];
  let xmin = 100n;
  let down = false;
  const store = {
    keyChangesHorizon: async () => {
      if (down) throw new Error('database down');
      return xmin;
    },
    readKeyChanges: async (horizon: bigint, seen: readonly bigint[], limit: number) => {
      if (down) throw new Error('database down');
      const changes = rows
        .filter((row) => row.txid >= horizon && !seen.includes(row.seq))
        .sort((a, b) => (a.txid === b.txid ? Number(a.seq - b.seq) : Number(a.txid - b.txid)))
        .slice(0, limit);
      return { changes, xmin };
    },
    pruneKeyChanges: async () => 0,
  };
  return {
    store,
    write: (row: KeyChange) => rows.push(row),
    setXmin: (value: bigint) => (xmin = value),
    setDown: (value: boolean) => (down = value),
  };
}

const silent = { warn: () => undefined, info: () => undefined, error: () => undefined } as unknown as Logger;

test('the feed starts at the horizon with a resync, applies each row once, and starts over after missing half the retention', async () => {
  const log = memoryLog();
  let now = 0;
  const applied: string[] = [];
  let resyncs = 0;
  const feed = new KeyChangeFeed(
    log.store,
    { onChanged: (c) => applied.push(c.tokenHash), onResync: () => resyncs++ },
    silent,
    { retentionMs: 600_000 },
    () => now,
  );
  log.write(change(1, 90)); // before the start: never applied
  await feed.poll();
  expect(resyncs).toBe(1);

  log.write(change(3, 105));
  log.setXmin(102n); // transaction 102 still open: 105 committed first
  await feed.poll();
  log.write(change(2, 102));
  log.setXmin(110n);
  await feed.poll();
  await feed.poll();
  expect(applied).toEqual(['h3', 'h2']);

  log.setDown(true);
  now += 300_001;
  await feed.poll();
  log.setDown(false);
  await feed.poll();
  expect(resyncs).toBe(2);
  await feed.close();
});
