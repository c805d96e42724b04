import { spawnSync } from 'node:child_process';

/** A base unit a metric name may carry, always as its last word (before `_total` on a counter). */
const BASE_UNITS = ['seconds', 'bytes', 'meters', 'grams', 'volts', 'amperes', 'joules', 'kelvin', 'celsius', 'ratio'];
/** Scaled or abbreviated units, and the base unit to use instead (promtool's lintMetricUnits and lintUnitAbbreviations). */
const NON_BASE_UNITS: Record<string, string> = {
  s: 'seconds',
  ms: 'seconds',
  us: 'seconds',
  ns: 'seconds',
  sec: 'seconds',
  secs: 'seconds',
  m: 'seconds or meters',
  h: 'seconds',
  d: 'seconds',
  milliseconds: 'seconds',
  microseconds: 'seconds',
  nanoseconds: 'seconds',
  minutes: 'seconds',
  hours: 'seconds',
  days: 'seconds',
  b: 'bytes',
  kb: 'bytes',
  mb: 'bytes',
  gb: 'bytes',
  tb: 'bytes',
  pb: 'bytes',
  kilobytes: 'bytes',
  megabytes: 'bytes',
  gigabytes: 'bytes',
  percent: 'ratio',
};
const SAMPLE_SUFFIXES: Record<string, readonly string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

interface Family {
  help?: string;
  type?: string;
}

/**
 * Problems of a Prometheus text exposition by the naming rules `promtool check metrics` holds
 * (and ours): HELP and TYPE for every metric; counters, and only counters, end in `_total`;
 * snake_case; base units (`_seconds`, `_bytes`) as the name's last word; no type in the name;
 * `_bucket`, `_sum`, `_count` and the `le` and `quantile` labels only where their type has them.
 * Empty when the exposition holds them all.
 */
export function metricsLintProblems(exposition: string): string[] {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let found = families.get(name);
    if (!found) families.set(name, (found = {}));
    return found;
  };
  const problems: string[] = [];
  const samples: Array<{ name: string; labels: string }> = [];
  for (const line of exposition.split('\n')) {
    if (!line.trim()) continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string | undefined];
      if (kind === 'HELP') family(name).help = rest ?? '';
      else family(name).type = rest ?? '';
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([^\s{]+)(\{[^}]*\})?\s/.exec(line);
    if (sample) samples.push({ name: sample[1]!, labels: sample[2] ?? '' });
    else problems.push(`unreadable line: ${line}`);
  }

  for (const [name, { help, type }] of families) {
    if (type === undefined) problems.push(`${name}: no TYPE`);
    if (!help?.trim()) problems.push(`${name}: no HELP`);
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) problems.push(`${name}: not snake_case ([a-z0-9_], no colons)`);
    const words = name.split('_');
    if (type === 'counter' && !name.endsWith('_total')) problems.push(`${name}: a counter's name must end in _total`);
    if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: only counters end in _total (this is a ${type})`);
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (name.endsWith(suffix)) problems.push(`${name}: ${suffix} is reserved for the samples of histograms and summaries`);
    }
    for (const word of words) {
      if (['gauge', 'counter', 'histogram', 'summary', 'untyped'].includes(word)) problems.push(`${name}: the type (${word}) does not belong in the name`);
      const base = NON_BASE_UNITS[word];
      if (base) problems.push(`${name}: use the base unit ${base}, not ${word}`);
    }
    const unitWords = words.filter((w) => BASE_UNITS.includes(w));
    const last = type === 'counter' ? words.at(-2) : words.at(-1);
    for (const unit of unitWords)
      if (unit !== last) problems.push(`${name}: the unit ${unit} must be the name's last word${type === 'counter' ? ' before _total' : ''}`);
  }

  for (const { name, labels } of samples) {
    const owner = [...families.entries()].find(([f, { type }]) => f === name || (SAMPLE_SUFFIXES[type ?? '']?.some((s) => `${f}${s}` === name) ?? false));
    if (!owner) {
      problems.push(`${name}: a sample without HELP and TYPE`);
      continue;
    }
    const type = owner[1].type;
    if (/(^\{|,)le="/.test(labels) && type !== 'histogram') problems.push(`${name}: the le label belongs to histograms`);
    if (/(^\{|,)quantile="/.test(labels) && type !== 'summary') problems.push(`${name}: the quantile label belongs to summaries`);
  }
  return [...new Set(problems)];
}

/**
 * `promtool check metrics` on an exposition: its problem lines (empty when it passes), or undefined
 * when promtool is not installed (Debian: apt-get install prometheus).
 */
export function promtoolProblems(exposition: string): string[] | undefined {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8', timeout: 30_000 });
  if (result.error) {
    if ((result.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw result.error;
  }
  const output = `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.trim());
  if (result.status === 0) return [];
  return output.length > 0 ? output : [`promtool exited ${result.status ?? result.signal}`];
}
