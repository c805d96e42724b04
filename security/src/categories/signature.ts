import { createHash, createHmac, randomUUID } from 'node:crypto';
import { INTERNAL_USAGE_PATH } from '@platform/core';
import { PUBLIC_WEBHOOK_URL, type Fixtures } from '../support/fixtures';
import { bodyBytes, describe, send, sleep, type Answer } from '../support/http';
import { refusedWith } from '../support/judge';
import type { Battlefield } from '../support/platform';
import type { Category } from '../support/recorder';
import { contractHeaders, contractSignature, preContractSignature, type SignedRequest } from '../support/signature';

/**
 * Category d: requests sent straight to each service's own port, signed as contract section 4
 * says (the battery's reference implementation), then tampered with: each tampered one must
 * be 401. A correctly signed baseline must be served, else the platform does not implement the
 * contract's signature (and every 401 below proves nothing).
 */

const SERVICES = ['events', 'warehouse', 'pipelines'] as const;
type Service = (typeof SERVICES)[number];

interface Spec {
  service: Service;
  method: string;
  path: string;
  body?: unknown;
  scopes: string;
  timestamp?: number;
}

interface Tampered {
  name: string;
  /** What is signed. */
  signed: Spec;
  /** What is sent, when it differs from what is signed. */
  sent?: Partial<Spec> & { headers?: (h: Record<string, string>) => Record<string, string> };
  /** Signed with a timestamp this many seconds ahead of the clock. */
  aheadSeconds?: number;
}

const now = () => Math.floor(Date.now() / 1000);

export async function attackSignatures(field: Battlefield, a: Fixtures, b: Fixtures, category: Category): Promise<void> {
  const secret = field.platform.internalSecret;
  const workspaceId = a.tenant.workspaceId;
  const keyId = a.tenant.keyIds[0]!;
  const endpointBody = { url: PUBLIC_WEBHOOK_URL, events: ['*'], enabled: false };

  const request = (spec: Spec, requestId: string): SignedRequest => ({
    service: spec.service,
    timestamp: String(spec.timestamp ?? now()),
    method: spec.method,
    pathAndQuery: spec.path,
    workspaceId,
    keyId,
    scopes: spec.scopes,
    requestId,
    body: bodyBytes(spec.body) ?? Buffer.alloc(0),
  });

  const deliver = (service: Service, method: string, path: string, headers: Record<string, string>, body: unknown): Promise<Answer> =>
    send(field.platform.serviceUrls[service], { method, path, headers, body });

  // Baselines: exactly what the contract's gateway would send.
  for (const service of SERVICES) {
    for (const spec of [
      { service, method: 'GET', path: '/webhook-endpoints?limit=1', scopes: 'webhooks:read' },
      { service, method: 'POST', path: '/webhook-endpoints', scopes: 'webhooks:write', body: endpointBody },
    ] satisfies Spec[]) {
      const requestId = randomUUID();
      const answer = await deliver(service, spec.method, spec.path, contractHeaders(secret, request(spec, requestId)), spec.body);
      const expected = spec.method === 'GET' ? 200 : 201;
      category.check(
        `baseline ${spec.method} ${service}${spec.path} signed as contract 4 says`,
        answer.status === expected ? [] : [`${describe(answer)}: a correctly signed request refused (the platform does not implement contract 4's signature)`],
      );
    }
  }

  for (const service of SERVICES) {
    const other = SERVICES.filter((s) => s !== service);
    const endpoint = `/webhook-endpoints/${a.ids[`${service}:webhook-endpoints`]![1]}`;
    const read: Spec = { service, method: 'GET', path: '/webhook-endpoints', scopes: 'webhooks:read' };
    const write: Spec = { service, method: 'POST', path: '/webhook-endpoints', scopes: 'webhooks:write', body: endpointBody };
    const drop = (name: string) => (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== name));
    const set = (name: string, value: string) => (h: Record<string, string>) => ({ ...h, [name]: value });

    const tampered: Tampered[] = [
      { name: 'scopes changed to *', signed: read, sent: { headers: set('x-platform-scopes', '*') } },
      {
        name: 'scopes widened to write',
        signed: { ...write, scopes: 'webhooks:read' },
        sent: { headers: set('x-platform-scopes', 'webhooks:read webhooks:write') },
      },
      { name: 'another body', signed: write, sent: { body: { ...endpointBody, url: `${PUBLIC_WEBHOOK_URL}/other` } } },
      { name: 'a body where none was signed', signed: { ...write, body: undefined }, sent: { body: endpointBody } },
      ...other.map((o) => ({ name: `signed for ${o}, sent to ${service}`, signed: { ...read, service: o } })),
      { name: 'another request id', signed: read, sent: { headers: set('x-request-id', randomUUID()) } },
      { name: 'timestamp 61 s old', signed: { ...read, timestamp: now() - 61 } },
      { name: 'timestamp 6 s ahead', signed: read, aheadSeconds: 6 },
      { name: 'timestamp in milliseconds', signed: { ...read, timestamp: Date.now() } },
      { name: 'another method (GET signed, DELETE sent)', signed: { ...read, path: endpoint }, sent: { method: 'DELETE' } },
      { name: 'another path', signed: read, sent: { path: endpoint } },
      { name: 'another query', signed: { ...read, path: '/webhook-endpoints?limit=1' }, sent: { path: '/webhook-endpoints?limit=2' } },
      { name: "B's workspace id", signed: read, sent: { headers: set('x-platform-workspace-id', b.tenant.workspaceId) } },
      { name: 'another key id', signed: read, sent: { headers: set('x-platform-key-id', randomUUID()) } },
      ...['x-platform-workspace-id', 'x-platform-key-id', 'x-platform-scopes', 'x-request-id', 'x-platform-timestamp', 'x-platform-signature'].map((h) => ({
        name: `without ${h}`,
        signed: read,
        sent: { headers: drop(h) },
      })),
      { name: 'empty signature', signed: read, sent: { headers: set('x-platform-signature', '') } },
      // Contract 20: the quotas travel beside the signature with a MAC of their own; a client's are never believed.
      {
        name: 'raised quotas without their MAC',
        signed: write,
        sent: { headers: set('x-platform-quotas', 'pipelines=999999;scheduled_pipelines=999999;webhook_endpoints=999999') },
      },
      {
        name: 'raised quotas with a forged MAC',
        signed: write,
        sent: {
          headers: (h) => ({
            ...h,
            'x-platform-quotas': 'pipelines=999999;scheduled_pipelines=999999;webhook_endpoints=999999',
            'x-platform-quotas-signature': 'f'.repeat(64),
          }),
        },
      },
      { name: 'the internal usage route without a signature', signed: { ...read, path: INTERNAL_USAGE_PATH }, sent: { headers: drop('x-platform-signature') } },
      { name: 'truncated signature', signed: read, sent: { headers: (h) => ({ ...h, 'x-platform-signature': h['x-platform-signature']!.slice(0, 32) }) } },
      {
        name: 'the MAC keyed with the secret itself (no per-service key)',
        signed: read,
        sent: { headers: (h) => ({ ...h, 'x-platform-signature': rawSecretMac(secret, h, '') }) },
      },
      {
        name: 'the pre-contract signature (no scopes, request id or body in the MAC)',
        signed: read,
        sent: {
          headers: (h) => ({
            ...h,
            'x-platform-signature': preContractSignature(secret, {
              timestamp: h['x-platform-timestamp']!,
              method: 'GET',
              pathAndQuery: '/webhook-endpoints',
              workspaceId,
              keyId,
            }),
          }),
        },
      },
      {
        name: 'signed with another secret',
        signed: read,
        sent: {
          headers: (h) => ({ ...h, 'x-platform-signature': contractSignature(`${secret}x`, requestFromHeaders(service, h, 'GET', '/webhook-endpoints')) }),
        },
      },
    ];

    for (const t of tampered) {
      if (t.aheadSeconds !== undefined) {
        // Early in a second, so "6 s ahead" cannot become 5 s by the time the service reads its clock.
        while (Date.now() % 1000 > 300) await sleep(20);
      }
      const signedSpec = t.aheadSeconds === undefined ? t.signed : { ...t.signed, timestamp: now() + t.aheadSeconds };
      const requestId = randomUUID();
      let headers = contractHeaders(secret, request(signedSpec, requestId));
      if (t.sent?.headers) headers = t.sent.headers(headers);
      const answer = await deliver(
        service,
        t.sent?.method ?? signedSpec.method,
        t.sent?.path ?? signedSpec.path,
        headers,
        t.sent && 'body' in t.sent ? t.sent.body : signedSpec.body,
      );
      category.check(`${service}: ${t.name}`, refusedWith(401, 'unauthorized')(answer));
    }
  }
}

function requestFromHeaders(service: string, h: Record<string, string>, method: string, path: string): SignedRequest {
  return {
    service,
    timestamp: h['x-platform-timestamp']!,
    method,
    pathAndQuery: path,
    workspaceId: h['x-platform-workspace-id']!,
    keyId: h['x-platform-key-id']!,
    scopes: h['x-platform-scopes']!,
    requestId: h['x-request-id']!,
    body: Buffer.alloc(0),
  };
}

/** The contract's message, but the HMAC keyed with the shared secret instead of the derived key. */
function rawSecretMac(secret: string, h: Record<string, string>, body: string): string {
  const text = [
    h['x-platform-timestamp'],
    'GET',
    '/webhook-endpoints',
    h['x-platform-workspace-id'],
    h['x-platform-key-id'],
    h['x-platform-scopes'],
    h['x-request-id'],
    createHash('sha256').update(body).digest('hex'),
  ].join('\n');
  return createHmac('sha256', secret).update(text).digest('hex');
}
