import { collectDefaultMetrics } from 'prom-client';
import { createMetricsRegistry, HttpMetrics, Registry, registeredCounter, trackQueueDepth } from './metrics';
import { metricsLintProblems, promtoolProblems } from './metrics-lint';
import { Readiness } from '../http/readiness';

/** Where promtool is installed (Debian: apt-get install prometheus) it checks the same texts; the TS lint runs everywhere. */
const promtool = promtoolProblems('') !== undefined;

/** A registry with every kind of metric @platform/core makes, each with a sample. */
async function everyCoreMetric(): Promise<string> {
  const registry = createMetricsRegistry();
  new HttpMetrics(registry).route('GET', '/things/:id').observe(200, 0.004);
  trackQueueDepth(registry, { name: 'runs', getJobCounts: async () => ({ wait: 1 }) });
  registeredCounter(registry, 'things_total', 'Things done, by outcome.', ['outcome']).labels('ok').inc();
  new Readiness({ database: async () => undefined, redis: async () => Promise.reject(new Error('down')) }, { registry });
  return registry.metrics();
}

describe('the exposition of a process', () => {
  test('holds the naming rules: counters and only counters end in _total, base units last, HELP and TYPE (and passes `promtool check metrics` where installed)', async () => {
    const text = await everyCoreMetric();
    expect(text).toContain('platform_dependency_up{dependency="redis"} 0');
    expect(metricsLintProblems(text)).toEqual([]);
    if (promtool) expect(promtoolProblems(text)).toEqual([]);
  });

  test("prom-client's default metrics as they come break the rule (the gauges named *_total)", async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const text = await registry.metrics();
    expect(metricsLintProblems(text).sort()).toEqual([
      'nodejs_active_handles_total: only counters end in _total (this is a gauge)',
      'nodejs_active_requests_total: only counters end in _total (this is a gauge)',
      'nodejs_active_resources_total: only counters end in _total (this is a gauge)',
    ]);
    if (promtool) expect(promtoolProblems(text)?.join('\n')).toMatch(/nodejs_active_handles_total non-counter metrics should not have "_total" suffix/);
  });
});

describe('metricsLintProblems catches', () => {
  const family = (name: string, type: string, sample = `${name} 1`, help = 'Something.') => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${sample}\n`;
  // [what, exposition, our problem, whether promtool flags it too]
  const cases: Array<[string, string, string, boolean]> = [
    ['a counter without _total', family('jobs_done', 'counter'), "jobs_done: a counter's name must end in _total", true],
    ['a gauge with _total', family('open_things_total', 'gauge'), 'open_things_total: only counters end in _total', true],
    ['milliseconds', family('request_duration_milliseconds', 'gauge'), 'use the base unit seconds, not milliseconds', true],
    ['an abbreviated unit', family('request_duration_ms', 'gauge'), 'use the base unit seconds, not ms', true],
    ['camelCase', family('requestCount_total', 'counter'), 'not snake_case', true],
    ['a colon (reserved for recording rules)', family('job:requests_total', 'counter'), 'not snake_case', true],
    ['the type in the name', family('queue_gauge', 'gauge'), 'the type (gauge) does not belong in the name', true],
    ['_count on a gauge', family('things_count', 'gauge'), '_count is reserved for the samples of histograms and summaries', true],
    ['no HELP', '# TYPE lonely gauge\nlonely 1\n', 'lonely: no HELP', true],
    ['a sample without TYPE', 'stray 1\n', 'stray: a sample without HELP and TYPE', false],
    ['a unit that is not the last word', family('wait_seconds_max', 'gauge'), "the unit seconds must be the name's last word", false],
    ['le on a gauge', family('buckets', 'gauge', 'buckets{le="1"} 1'), 'the le label belongs to histograms', false],
  ];
  test.each(cases)('%s', (_, text, problem, promtoolToo) => {
    expect(metricsLintProblems(text).join('\n')).toContain(problem);
    if (promtool && promtoolToo) expect(promtoolProblems(text)).not.toEqual([]);
  });

  test("a histogram's _bucket, _sum and _count samples and its le label are its own", () => {
    const text = [
      '# HELP op_duration_seconds Time.',
      '# TYPE op_duration_seconds histogram',
      'op_duration_seconds_bucket{le="0.1"} 1',
      'op_duration_seconds_bucket{le="+Inf"} 1',
      'op_duration_seconds_sum 0.05',
      'op_duration_seconds_count 1',
      '',
    ].join('\n');
    expect(metricsLintProblems(text)).toEqual([]);
    if (promtool) expect(promtoolProblems(text)).toEqual([]);
  });
});
