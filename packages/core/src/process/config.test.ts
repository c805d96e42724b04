import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { MAX_QUOTA_VALUE } from '../data/quotas';
import { ConfigError, DEFAULT_HOST, env, parseConfig } from './config';

test('configuration is parsed once and a bad variable is named in one line', () => {
  const schema = z.object({ PORT: env.port(8080), SECRET: env.secret(), FLAG: env.boolean(false) });
  expect(parseConfig(schema, { SECRET: 'x'.repeat(16) })).toEqual({ PORT: 8080, SECRET: 'x'.repeat(16), FLAG: false });
  expect(parseConfig(schema, { SECRET: 'x'.repeat(16), PORT: '9', FLAG: 'true' })).toMatchObject({ PORT: 9, FLAG: true });
  expect(() => parseConfig(schema, { PORT: 'abc', SECRET: 'x'.repeat(16) })).toThrow(ConfigError);
  expect(() => parseConfig(schema, { PORT: 'abc', SECRET: 'x'.repeat(16) })).toThrow(/^invalid configuration: PORT: /);
  const err = (() => {
    try {
      parseConfig(schema, {});
    } catch (e) {
      return e as Error;
    }
  })();
  expect(err?.message).toMatch(/SECRET/);
  expect(err?.message).not.toMatch(/\n/);
});

test('HOST is an IP address to listen on, 127.0.0.1 (this machine only) unless set', () => {
  const schema = z.object({ HOST: env.host() });
  expect(DEFAULT_HOST).toBe('127.0.0.1');
  expect(parseConfig(schema, {})).toEqual({ HOST: '127.0.0.1' });
  for (const host of ['0.0.0.0', '::', '10.0.0.7', '::1']) expect(parseConfig(schema, { HOST: host })).toEqual({ HOST: host });
  // A shell's HOST is often the machine's name: refused, never resolved to whatever interface it names.
  for (const host of ['my-laptop', 'localhost', '', '0.0.0.0:80', '127.0.0.256']) {
    expect(() => parseConfig(schema, { HOST: host })).toThrow(/^invalid configuration: HOST: must be an IP address/);
  }
});

test('a limit is a whole number from 0 to its maximum (MAX_QUOTA_VALUE unless given); unset: its default; empty is refused, not 0', () => {
  const schema = z.object({ LIMIT: env.limit(1_000), SMALL: env.limit(5, 10) });
  expect(parseConfig(schema, {})).toEqual({ LIMIT: 1_000, SMALL: 5 });
  expect(parseConfig(schema, { LIMIT: '0', SMALL: '10' })).toEqual({ LIMIT: 0, SMALL: 10 });
  expect(parseConfig(schema, { LIMIT: String(MAX_QUOTA_VALUE) }).LIMIT).toBe(MAX_QUOTA_VALUE);
  for (const value of ['', '-1', '1.5', '1e3', ' 7', 'ten', String(MAX_QUOTA_VALUE + 1)]) {
    expect(() => parseConfig(schema, { LIMIT: value })).toThrow(/^invalid configuration: LIMIT: /);
  }
  expect(() => parseConfig(schema, { SMALL: '11' })).toThrow(/^invalid configuration: SMALL: /);
});

describe('NAME_FILE (secrets mounted as files)', () => {
  const schema = z.object({ SECRET: env.secret(), PORT: env.port(8080) });
  const dir = mkdtempSync(join(tmpdir(), 'config-'));
  const file = join(dir, 'secret');
  writeFileSync(file, `${'s'.repeat(20)}\n`);

  test('gives the file content, without its final newline, to an unset or empty variable', () => {
    expect(parseConfig(schema, { SECRET_FILE: file })).toMatchObject({ SECRET: 's'.repeat(20) });
    expect(parseConfig(schema, { SECRET: '', SECRET_FILE: file })).toMatchObject({ SECRET: 's'.repeat(20) });
  });

  test('a variable that is set wins over its file', () => {
    expect(parseConfig(schema, { SECRET: 'e'.repeat(16), SECRET_FILE: file })).toMatchObject({ SECRET: 'e'.repeat(16) });
  });

  test('a file that cannot be read names the variable and the path, never a content', () => {
    expect(() => parseConfig(schema, { SECRET_FILE: join(dir, 'missing') })).toThrow(/SECRET_FILE: cannot read .*missing \(ENOENT\)/);
  });
});
