// The workspace's quotas (contract section 20): each limit in force, whether it is the platform
// default or the workspace's own, and the usage the gateway asked of the services. Read-only: the
// CLI (`platform quotas set`) and the admin API change them.
import { admin, type WorkspaceQuotas } from './api.js';
import { badge, busy, byId, cell, h } from './dom.js';
import { describeState, quotaLines, type QuotaLine } from './quotas.format.js';
import { announce, clearError, showError } from './messages.js';
import { currentWorkspace, requireAdminToken } from './session.js';

let loaded = false;
/** Bumped when the workspace changes, so an answer for the previous one is dropped. */
let generation = 0;

const tbody = () => byId<HTMLTableElement>('quotas-table').tBodies[0]!;

function quotaRow(line: QuotaLine): HTMLTableRowElement {
  const state = describeState(line);
  return h(
    'tr',
    { 'data-quota': line.quota, 'data-service': line.service },
    cell('Quota', line.label),
    cell('Limit', line.limit),
    cell('Set by', line.isDefault ? badge('platform default', 'default') : badge('this workspace', 'self')),
    cell(
      'Usage',
      line.usage,
      state ? h('span', {}, ' ', badge(state.mark, line.state === 'over' ? 'failed' : 'paused'), ' ', h('span', { class: 'hint' }, state.note)) : null,
    ),
  );
}

function render(quotas: WorkspaceQuotas): void {
  tbody().replaceChildren(...quotaLines(quotas).map(quotaRow));
}

async function loadQuotas(): Promise<void> {
  const at = generation;
  const quotas = await admin.quotas(requireAdminToken(), currentWorkspace().id);
  if (at === generation) render(quotas);
}

export function initQuotasView(): void {
  const refresh = byId<HTMLButtonElement>('quotas-refresh');
  refresh.addEventListener('click', () => {
    clearError();
    busy([refresh], loadQuotas).then(
      () => announce('Quotas read again.'),
      (err: unknown) => showError(err, 'Could not load the quotas'),
    );
  });
}

/** Loads the quotas the first time the tab is shown for this workspace. */
export async function showQuotas(): Promise<void> {
  if (loaded) return;
  loaded = true;
  try {
    await loadQuotas();
  } catch (err) {
    loaded = false;
    showError(err, 'Could not load the quotas');
  }
}

export function resetQuotasView(): void {
  generation++;
  loaded = false;
  tbody().replaceChildren();
}
