import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { SERVICES } from '@platform/core';
import type { Fixtures } from '../support/fixtures';
import { describe, forEachLimited, type Answer } from '../support/http';
import { refusedWith, type Judge } from '../support/judge';
import type { Battlefield } from '../support/platform';
import type { Category } from '../support/recorder';

/**
 * Category c: every URL-taking field (webhook endpoint `url` of the three services on create and
 * PATCH, pipelines http-json `url` and postgres `connection_url`, on create and in
 * POST /connectors/check) with private, loopback and IPv4-embedding IPv6 forms, numeric spellings
 * and names that resolve to loopback. The platform runs with private addresses refused: each must
 * be 400 on that field (a check: a `failed` check, or the 400 for an invalid config), and no
 * answer may say what a name resolved to (contract sections 10, 11, 14).
 */

/** Hosts as they appear in a URL's authority. */
export const PRIVATE_HOSTS = [
  'localhost',
  '127.0.0.1',
  '127.1',
  '0.0.0.0',
  '0',
  '[::1]',
  '[::]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::127.0.0.1]',
  '[::ffff:0:7f00:1]',
  '[64:ff9b::7f00:1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::]',
  '[2001::1]',
  '[fec0::1]',
  '[100::1]',
  '[fe80::1]',
  '[fc00::1]',
  '10.0.0.1',
  '172.16.0.1',
  '192.168.0.1',
  '100.64.0.1',
  '169.254.169.254',
  '2130706433',
  '0x7f000001',
  '017700000001',
  '0x7f.0.0.1',
];

const PUBLIC_HOST = '93.184.215.14';

/** Names that resolve to a loopback address on this machine (its /etc/hosts, its own name, `localhost.`). */
export async function loopbackNames(): Promise<string[]> {
  const candidates = new Set<string>(['localhost.', hostname()]);
  try {
    for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
      const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
      if (address && (/^127\./.test(address) || address === '::1')) for (const name of names) if (name && name !== 'localhost') candidates.add(name);
    }
  } catch {
    // no /etc/hosts: the other names
  }
  const names: string[] = [];
  for (const name of candidates) {
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length > 0 && addresses.every((a) => /^127\./.test(a.address) || a.address === '::1')) names.push(name);
  }
  return names.sort();
}

/** A host written as a name (not an address in any numeric spelling). */
function isName(host: string): boolean {
  return isIP(host.replace(/^\[|\]$/g, '')) === 0 && /[a-z]/i.test(host) && !/^0x/i.test(host);
}

const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}\b/g;

/** For a name, the addresses in the answer that the request did not hold: what the name resolved to. */
function resolutionLeaks(host: string, sent: string, answer: Answer): string[] {
  if (!isName(host)) return [];
  const addresses = [...(answer.text.match(IPV4) ?? []), ...(answer.text.includes('::1') ? ['::1'] : [])].filter((a) => !sent.includes(a));
  return addresses.length > 0 ? [`the answer says what ${host} resolved to (${addresses.join(', ')})`] : [];
}

/** 400 naming the field; for a name, no address in the answer that the request did not hold. */
function refusedOn(fieldName: string, host: string, sent: string): Judge {
  const base = refusedWith(400);
  return (answer: Answer) => {
    const problems = base(answer);
    if (answer.status === 400) {
      const fields = ((answer.json?.error?.errors ?? []) as { field: string }[]).map((e) => e.field);
      if (!fields.includes(fieldName)) problems.push(`400 not on ${fieldName} (on ${fields.join(', ') || 'no field'})`);
    }
    return [...problems, ...resolutionLeaks(host, sent, answer)];
  };
}

/**
 * POST /connectors/check (contract section 14): a refused address is a `failed` check (200), never
 * a succeeded one; an invalid config (a platform database, a parameter) may be the 400 on the field
 * that create gives. Either way no address a name resolved to.
 */
function checkRefused(fieldName: string, host: string, sent: string): Judge {
  const invalid = refusedOn(fieldName, host, sent);
  return (answer: Answer) => {
    if (answer.status !== 200) return invalid(answer);
    // Refused by the address guard, not merely unreachable: the message names the refused field.
    const message: unknown = answer.json?.message;
    const problems =
      answer.json?.status === 'failed' && typeof message === 'string' && message.startsWith(`${fieldName} `)
        ? []
        : [`${describe(answer)}: not a check failed on ${fieldName}`];
    return [...problems, ...resolutionLeaks(host, sent, answer)];
  };
}

const checkHttpJson = (url: string) => ({ kind: 'source', connector: 'http-json', config: { url } });
const checkPostgres = (connectionUrl: string) => ({
  kind: 'destination',
  connector: 'postgres',
  config: { table: 'ssrf_probe', connection_url: connectionUrl },
});

const accepted =
  (status: number): Judge =>
  (answer) =>
    answer.status === status ? [] : [`${describe(answer)}: a public address refused`];

interface Probe {
  input: string;
  method: string;
  path: string;
  body: unknown;
  judge: Judge;
}

const pipelineWith = (source: unknown, destination: unknown) => ({ name: 'ssrf probe', source, destination });
const sample = { connector: 'sample', config: { records: 1 } };
const table = { connector: 'postgres', config: { table: 'ssrf_probe' } };
const httpJson = (url: string) => pipelineWith({ connector: 'http-json', config: { url } }, table);
const postgres = (connectionUrl: string) => pipelineWith(sample, { connector: 'postgres', config: { table: 'ssrf_probe', connection_url: connectionUrl } });

function probesFor(host: string, endpoints: Record<string, string>): Probe[] {
  const probes: Probe[] = [];
  const url = `http://${host}/hook`;
  for (const [prefix, endpointId] of Object.entries(endpoints)) {
    probes.push({
      input: `POST ${prefix}/webhook-endpoints url ${url}`,
      method: 'POST',
      path: `${prefix}/webhook-endpoints`,
      body: { url, events: ['*'], enabled: false },
      judge: refusedOn('url', host, url),
    });
    probes.push({
      input: `PATCH ${prefix}/webhook-endpoints/:id url ${url}`,
      method: 'PATCH',
      path: `${prefix}/webhook-endpoints/${endpointId}`,
      body: { url },
      judge: refusedOn('url', host, url),
    });
  }
  const source = `http://${host}/records.json`;
  probes.push({
    input: `POST /pipelines http-json url ${source}`,
    method: 'POST',
    path: '/pipelines/v3/pipelines',
    body: httpJson(source),
    judge: refusedOn('source.config.url', host, source),
  });
  const connection = `postgresql://postgres@${host}:5432/postgres`;
  probes.push({
    input: `POST /pipelines postgres connection_url ${connection}`,
    method: 'POST',
    path: '/pipelines/v3/pipelines',
    body: postgres(connection),
    judge: refusedOn('destination.config.connection_url', host, connection),
  });
  probes.push({
    input: `POST /connectors/check http-json url ${source}`,
    method: 'POST',
    path: '/pipelines/v3/connectors/check',
    body: checkHttpJson(source),
    judge: checkRefused('config.url', host, source),
  });
  probes.push({
    input: `POST /connectors/check postgres connection_url ${connection}`,
    method: 'POST',
    path: '/pipelines/v3/connectors/check',
    body: checkPostgres(connection),
    judge: checkRefused('config.connection_url', host, connection),
  });
  return probes;
}

/** connection_url forms that name the platform's own databases or carry parameters other than sslmode, on a public host. */
function connectionUrlProbes(field: Battlefield): Probe[] {
  const own = Object.values(field.platform.databaseUrls).map((u) => new URL(u).pathname.slice(1));
  const names = [...new Set([...own, 'platform_gateway', 'platform_events', 'platform_warehouse', 'platform_pipelines'])];
  const urls = [
    ...names.map((name) => `postgresql://postgres@${PUBLIC_HOST}:5432/${name}`),
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?options=-c%20search_path%3Dws_00000000000000000000000000000000`,
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?options=-csearch_path=public`,
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?sslmode=require&options=-c%20search_path%3Dpublic`,
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?host=/var/run/postgresql`,
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?hostaddr=127.0.0.1`,
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?application_name=x&sslmode=disable`,
    `postgresql://postgres@${PUBLIC_HOST}:5432/analytics?target_session_attrs=any`,
    'postgresql:///platform_gateway?host=/var/run/postgresql',
    'postgresql://%2Fvar%2Frun%2Fpostgresql/platform_gateway',
    `postgresql://postgres@${PUBLIC_HOST},127.0.0.1:5432/analytics`,
    'postgresql://postgres@/analytics',
  ];
  return urls.flatMap((url) => [
    {
      input: `POST /pipelines postgres connection_url ${url}`,
      method: 'POST',
      path: '/pipelines/v3/pipelines',
      body: postgres(url),
      judge: refusedOn('destination.config.connection_url', PUBLIC_HOST, url),
    },
    {
      input: `POST /connectors/check postgres connection_url ${url}`,
      method: 'POST',
      path: '/pipelines/v3/connectors/check',
      body: checkPostgres(url),
      judge: checkRefused('config.connection_url', PUBLIC_HOST, url),
    },
  ]);
}

/** Public addresses are accepted: without these, a platform that refuses everything would pass. */
function controls(endpoints: Record<string, string>): Probe[] {
  const url = `https://${PUBLIC_HOST}/hook`;
  return [
    ...Object.keys(endpoints).map((prefix) => ({
      input: `control: POST ${prefix}/webhook-endpoints url ${url}`,
      method: 'POST',
      path: `${prefix}/webhook-endpoints`,
      body: { url, events: ['*'], enabled: false },
      judge: accepted(201),
    })),
    {
      input: `control: http-json url https://${PUBLIC_HOST}/records.json`,
      method: 'POST',
      path: '/pipelines/v3/pipelines',
      body: httpJson(`https://${PUBLIC_HOST}/records.json`),
      judge: accepted(201),
    },
    {
      input: 'control: postgres connection_url with sslmode only',
      method: 'POST',
      path: '/pipelines/v3/pipelines',
      body: postgres(`postgresql://u@${PUBLIC_HOST}:5432/analytics?sslmode=require`),
      judge: accepted(201),
    },
  ];
}

export async function attackWithAddresses(field: Battlefield, fixtures: Fixtures, category: Category, deadline: number): Promise<void> {
  const endpoints = {
    [SERVICES.events.prefix]: fixtures.ids['events:webhook-endpoints']![0]!,
    [SERVICES.warehouse.prefix]: fixtures.ids['warehouse:webhook-endpoints']![0]!,
    [SERVICES.pipelines.prefix]: fixtures.ids['pipelines:webhook-endpoints']![0]!,
  };
  const hosts = [...PRIVATE_HOSTS, ...(await loopbackNames())];
  const probes = [...hosts.flatMap((host) => probesFor(host, endpoints)), ...connectionUrlProbes(field), ...controls(endpoints)];
  const { skipped } = await forEachLimited(probes, 6, deadline, async (probe) => {
    category.check(probe.input, probe.judge(await fixtures.tenant.call(probe.method, probe.path, probe.body)));
  });
  for (const probe of skipped) category.fail(probe.input, 'not sent: the category ran out of time');
}
