import { maxProgressLines, progressLineDue, PROGRESS_EVERY_STEP } from './run-logs';

function progressLines(steps: number): number {
  let lines = 0;
  for (let step = 1; step <= steps; step++) if (progressLineDue(step)) lines++;
  return lines;
}

test('every step writes a progress line up to PROGRESS_EVERY_STEP', () => {
  expect(progressLines(PROGRESS_EVERY_STEP)).toBe(PROGRESS_EVERY_STEP);
  expect(maxProgressLines(PROGRESS_EVERY_STEP)).toBe(PROGRESS_EVERY_STEP);
  // 100,000 sample records in the default batches of 500.
  expect(progressLines(200)).toBe(200);
});

test('beyond it the lines thin out: each doubling adds at most 100, so a batch size of 1 cannot write a line per record', () => {
  for (const steps of [201, 300, 400, 401, 799, 800, 1_000, 12_345, 100_000]) {
    expect(progressLines(steps)).toBeLessThanOrEqual(maxProgressLines(steps));
  }
  expect(progressLines(400)).toBe(300);
  expect(progressLines(800)).toBe(400);
  // 100,000 records with WORKER_BATCH_SIZE=1: at most 1,100 progress lines, not 100,000.
  expect(maxProgressLines(100_000)).toBe(1_100);
  expect(progressLines(100_000)).toBeLessThanOrEqual(1_100);
  expect(progressLines(100_000)).toBeGreaterThan(1_000);
});
