import { writeFileSync } from 'node:fs';
import { attackWithBadInput } from './categories/bad-input';
import { attackAcrossWorkspaces } from './categories/cross-workspace';
import { attackHeaders, watchEveryAnswer } from './categories/headers';
import { attackNeighbours } from './categories/neighbours';
import { attackWithBodies } from './categories/oversized';
import { attackSignatures } from './categories/signature';
import { attackWithAddresses } from './categories/ssrf';
import { createFixtures, type Fixtures } from './support/fixtures';
import { createTenant, startBattlefield, type Battlefield } from './support/platform';
import { Recorder, type Category } from './support/recorder';

// The hostile battery (issue 13): the real built platform attacked from outside, as a hostile
// tenant would. Each category records the inputs it tried and the ones whose answer broke the
// contract; the table at the end is the result, and any failure fails the suite.
// SECURITY_BATTERY_FAILURES=<file> writes every failure there, one a line.

const recorder = new Recorder();
const categories = {
  badInput: recorder.category('a. bad strings and dates'),
  crossWorkspace: recorder.category('b. cross-workspace'),
  ssrf: recorder.category('c. SSRF forms on URL fields'),
  signature: recorder.category('d. signature tampering'),
  bodies: recorder.category('e. oversized and amplifying bodies'),
  headers: recorder.category('f. headers: nosniff, HEAD, gzip'),
  neighbours: recorder.category('g. neighbours: quotas and fair sharing'),
};

let field: Battlefield;
let a: Fixtures;
let b: Fixtures;
let stopWatching: () => void = () => undefined;

beforeAll(async () => {
  field = await startBattlefield();
  [a, b] = [await createFixtures(field, await createTenant(field, 'a')), await createFixtures(field, await createTenant(field, 'b'))];
  // From here on every answer counts (set-up polls runs a varying number of times).
  stopWatching = watchEveryAnswer(categories.headers);
}, 300_000);

afterAll(async () => {
  stopWatching();
  process.stdout.write(`\nHostile battery\n${recorder.report()}\n\n`);
  // The whole list, one failure a line, for whoever fixes them.
  if (process.env.SECURITY_BATTERY_FAILURES) writeFileSync(process.env.SECURITY_BATTERY_FAILURES, `${recorder.allFailures()}\n`);
  await field?.stop();
}, 60_000);

/** Fails with this category's failures listed (the table at the end has them all). */
function expectNoFailures(category: Category): void {
  if (category.failures.length > 0) throw new Error(`${category.name}: ${category.failures.length} of ${category.tried} inputs failed\n${category.summary()}`);
}

const minutes = (n: number) => Date.now() + n * 60_000;

test("b. with A's key, every route that takes an id meets B's ids: 404, and B's data is unchanged", async () => {
  await attackAcrossWorkspaces(field, a, b, categories.crossWorkspace, minutes(1));
  expectNoFailures(categories.crossWorkspace);
}, 120_000);

test('a. bad strings and dates on every route of the route table and the admin API: 4xx with the error body', async () => {
  await attackWithBadInput(field, a, categories.badInput, minutes(1.5));
  expectNoFailures(categories.badInput);
}, 150_000);

test('c. private, loopback and platform addresses in every URL field: 400 (a connector check: failed), without saying what a name resolved to', async () => {
  await attackWithAddresses(field, a, categories.ssrf, minutes(1));
  expectNoFailures(categories.ssrf);
}, 120_000);

test("d. tampered internal signatures against each service's own port: 401", async () => {
  await attackSignatures(field, a, b, categories.signature);
  expectNoFailures(categories.signature);
}, 60_000);

test('e. oversized, amplifying, encoded, deep and slow bodies: 413, 400 small, 415, 408, nothing stored over 1 MiB', async () => {
  await attackWithBodies(field, a, categories.bodies);
  expectNoFailures(categories.bodies);
}, 120_000);

test('f. every answer carried x-content-type-options: nosniff; HEAD answers every GET route; large JSON is gzipped on request', async () => {
  await attackHeaders(field, a, categories.headers);
  expectNoFailures(categories.headers);
}, 60_000);

test("g. A floods the platform (1 s schedules, idempotent answers, unknown scans, connector checks, cron lists): B's p99 within its bound, A's stores within their quotas", async () => {
  await attackNeighbours(field, categories.neighbours);
  expectNoFailures(categories.neighbours);
}, 420_000);

test('the table: no category has failures', () => {
  const failing = recorder.all().filter((c) => c.failures.length > 0);
  expect(failing.map((c) => `${c.name}: ${c.failures.length}`)).toEqual([]);
});
