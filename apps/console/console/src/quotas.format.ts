// What the quotas tab says about a workspace's quotas: plain functions of the admin API's answer
// (contract section 20), without the DOM, so they are tested alone.
import type { WorkspaceQuotas } from './api.js';

type QuotaName = keyof WorkspaceQuotas['limits'];

/** Where a quota stands: below its limit, at it (further creates are refused), or above it (set below what the workspace had). */
export type QuotaState = 'below' | 'reached' | 'over';

/** One line of the quotas table; `webhook_endpoints` is one line per service, each held to the same limit. */
export interface QuotaLine {
  quota: QuotaName;
  /** The service a webhook endpoints line counts. */
  service?: string;
  label: string;
  limit: string;
  usage: string;
  /** The platform default is in force (no value set for this workspace). */
  isDefault: boolean;
  state: QuotaState;
}

const LABELS: Record<QuotaName, string> = {
  pipelines: 'Pipelines',
  scheduled_pipelines: 'Scheduled pipelines (paused ones count)',
  webhook_endpoints: 'Webhook endpoints',
  idempotency_bytes: 'Stored idempotent answers',
};

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** `512 bytes`, `1.5 KiB`, `64 MiB`: binary units, at most one decimal, none when whole. */
export function describeBytes(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  let value = bytes;
  let unit: (typeof BYTE_UNITS)[number] = BYTE_UNITS[0];
  for (const next of BYTE_UNITS) {
    unit = next;
    value /= 1024;
    if (value < 1024) break;
  }
  const rounded = Math.round(value * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)} ${unit}`;
}

/** A count with thousands separators the same in every locale (`1,000`). */
const describeCount = (count: number): string => String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function stateOf(usage: number, limit: number): QuotaState {
  if (usage > limit) return 'over';
  return usage === limit ? 'reached' : 'below';
}

/** The table's lines, in the answer's order: pipelines, scheduled pipelines, webhook endpoints per service, stored answers. */
export function quotaLines(quotas: WorkspaceQuotas): QuotaLine[] {
  const line = (quota: QuotaName, usage: number, service?: string): QuotaLine => {
    const limit = quotas.limits[quota];
    const describe = quota === 'idempotency_bytes' ? describeBytes : describeCount;
    return {
      quota,
      ...(service === undefined ? {} : { service }),
      label: service === undefined ? LABELS[quota] : `${LABELS[quota]} (${service})`,
      limit: quota === 'webhook_endpoints' ? `${describe(limit)} per service` : describe(limit),
      usage: describe(usage),
      isDefault: quotas[quota] === null,
      state: stateOf(usage, limit),
    };
  };
  return [
    line('pipelines', quotas.usage.pipelines),
    line('scheduled_pipelines', quotas.usage.scheduled_pipelines),
    ...Object.entries(quotas.usage.webhook_endpoints).map(([service, count]) => line('webhook_endpoints', count, service)),
    line('idempotency_bytes', quotas.usage.idempotency_bytes),
  ];
}

/** What reaching a quota means for the workspace: a short mark and a note; null below it. */
export function describeState(line: Pick<QuotaLine, 'quota' | 'state'>): { mark: string; note: string } | null {
  if (line.state === 'below') return null;
  const refused = line.quota === 'idempotency_bytes' ? 'requests with a new Idempotency-Key get 429' : 'creating more is refused';
  return line.state === 'over' ? { mark: 'over the limit', note: `nothing was removed; ${refused}` } : { mark: 'limit reached', note: refused };
}
