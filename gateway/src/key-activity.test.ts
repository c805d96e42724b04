import { createLogger } from '@platform/core';
import { KeyActivityRecorder, statusClassIndex } from './key-activity';
import { STATUS_CLASSES, type UsageCount } from './keys.store';

const HOUR = 3_600_000;
const T = Date.parse('2026-03-02T10:15:00Z');

interface Call {
  flushId: string;
  lastUsed: { keyId: string; usedAt: Date }[];
  usage: UsageCount[];
}

function setup(failures = 0) {
  const calls: Call[] = [];
  let failing = failures;
  let prunes = 0;
  const store = {
    recordKeyActivity: async (flushId: string, lastUsed: Call['lastUsed'], usage: UsageCount[]) => {
      calls.push({ flushId, lastUsed, usage: usage.map((u) => ({ ...u, counts: [...u.counts] })) });
      if (failing-- > 0) throw new Error('database unreachable');
    },
    pruneKeyActivity: async () => {
      prunes++;
    },
  };
  const recorder = new KeyActivityRecorder(store, createLogger('test', 'silent'), 60_000, 10 * HOUR);
  return { recorder, calls, prunes: () => prunes };
}

test('each status counts in its class: 429 apart from the other 4xx', () => {
  const classOf = (status: number) => STATUS_CLASSES[statusClassIndex(status)];
  expect([200, 204, 301, 304, 400, 404, 429, 499, 500, 503].map(classOf)).toEqual(['2xx', '2xx', '3xx', '3xx', '4xx', '4xx', '429', '4xx', '5xx', '5xx']);
});

test('one flush writes every key and hour counted since the last, with the latest use per key', async () => {
  const { recorder, calls } = setup();
  recorder.used('a', T);
  recorder.used('a', T + 5);
  recorder.answered('a', 200, T);
  recorder.answered('a', 429, T + 1);
  recorder.answered('a', 200, T + HOUR);
  recorder.answered('b', 503, T);
  await recorder.flush();
  expect(calls).toHaveLength(1);
  expect(calls[0]!.lastUsed).toEqual([{ keyId: 'a', usedAt: new Date(T + 5) }]);
  expect(calls[0]!.usage).toEqual([
    { keyId: 'a', hour: new Date('2026-03-02T10:00:00Z'), counts: [1, 0, 0, 1, 0] },
    { keyId: 'a', hour: new Date('2026-03-02T11:00:00Z'), counts: [1, 0, 0, 0, 0] },
    { keyId: 'b', hour: new Date('2026-03-02T10:00:00Z'), counts: [0, 0, 0, 0, 1] },
  ]);
  await recorder.flush();
  expect(calls).toHaveLength(1);
});

test('a failed flush is retried with the same id and the same counts; what came meanwhile follows in its own flush', async () => {
  const { recorder, calls } = setup(2);
  recorder.answered('a', 200, T);
  await recorder.flush();
  recorder.answered('a', 200, T);
  recorder.answered('a', 404, T);
  await recorder.flush();
  expect(calls.map((c) => c.usage[0]!.counts)).toEqual([
    [1, 0, 0, 0, 0],
    [1, 0, 0, 0, 0],
  ]);
  expect(calls[1]!.flushId).toBe(calls[0]!.flushId);

  await recorder.flush();
  expect(calls).toHaveLength(4);
  expect(calls[2]!.flushId).toBe(calls[0]!.flushId);
  expect(calls[3]!.flushId).not.toBe(calls[0]!.flushId);
  expect(calls[3]!.usage).toEqual([{ keyId: 'a', hour: new Date('2026-03-02T10:00:00Z'), counts: [1, 0, 1, 0, 0] }]);
});

test('old usage is pruned after a successful flush, at most once per interval', async () => {
  const { recorder, prunes } = setup();
  recorder.answered('a', 200, T);
  await recorder.flush();
  recorder.answered('a', 200, T);
  await recorder.flush();
  expect(prunes()).toBe(1);
});

test('close writes what is left', async () => {
  const { recorder, calls } = setup();
  recorder.start();
  recorder.answered('a', 201, T);
  await recorder.close();
  expect(calls).toHaveLength(1);
});
