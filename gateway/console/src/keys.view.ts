// API keys: create (name, scopes, expiry; token shown once), list, revoke with confirmation.
import { admin, type ApiKey } from './api.js';
import { copyText } from './clipboard.js';
import { confirmAction } from './confirm.js';
import { badge, busy, byId, cell, clear, h, time } from './dom.js';
import { announce, clearError, showError } from './messages.js';
import { currentWorkspace, getMeta, requireAdminToken, sessionKeyId } from './session.js';

let nextCursor: string | null = null;

const form = () => byId<HTMLFormElement>('key-form');
const tbody = () => byId<HTMLTableElement>('keys-table').tBodies[0]!;

function scopeCheckboxId(scope: string): string {
  return `scope-${scope.replace(/[^a-z0-9]/gi, '-')}`;
}

/** One checkbox per contract scope, grouped by resource, from the gateway's meta (core's SCOPES). */
function renderScopeCheckboxes(): void {
  const groups = byId('key-scope-groups');
  clear(groups);
  for (const scope of getMeta().scopes) {
    const id = scopeCheckboxId(scope);
    groups.append(h('label', { class: 'choice', for: id }, h('input', { type: 'checkbox', id, name: 'key-scope', value: scope }), scope));
  }
}

function keyStatus(key: ApiKey): HTMLElement {
  if (key.revoked_at) return h('span', {}, badge('revoked'), ' ', time(key.revoked_at));
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return badge('expired');
  return badge('active');
}

function keyRow(key: ApiKey): HTMLTableRowElement {
  const isSession = key.id === sessionKeyId();
  const revoke = key.revoked_at
    ? null
    : h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'aria-label': `Revoke ${key.name} (${key.token_prefix})`,
          onclick: (e: Event) => void revokeKey(key, e.currentTarget as HTMLButtonElement),
        },
        'Revoke',
      );
  return h(
    'tr',
    { 'data-key-id': key.id },
    cell('Name', key.name, isSession ? h('span', {}, ' ', badge('this console', 'self')) : null),
    cell('Prefix', h('code', { class: 'nowrap' }, `${key.token_prefix}…`)),
    cell('Scopes', key.scopes === null ? h('em', {}, 'all (unrestricted)') : key.scopes.join(', ')),
    cell('Created', time(key.created_at)),
    cell('Expires', time(key.expires_at, 'never')),
    cell('Last used', time(key.last_used_at, 'never')),
    cell('Status', keyStatus(key)),
    cell('', revoke),
  );
}

/** Reloads the key list of the current workspace (first page; more on demand). */
export async function loadKeys(): Promise<void> {
  const page = await admin.listKeys(requireAdminToken(), currentWorkspace().id);
  clear(tbody());
  tbody().append(...page.data.map(keyRow));
  nextCursor = page.next_cursor;
  byId('keys-more').hidden = nextCursor === null;
}

async function loadMoreKeys(): Promise<void> {
  const page = await admin.listKeys(requireAdminToken(), currentWorkspace().id, nextCursor);
  tbody().append(...page.data.map(keyRow));
  nextCursor = page.next_cursor;
  byId('keys-more').hidden = nextCursor === null;
}

async function revokeKey(key: ApiKey, button: HTMLButtonElement): Promise<void> {
  const isSession = key.id === sessionKeyId();
  const confirmed = await confirmAction({
    title: `Revoke “${key.name}”?`,
    message: `Every request with the key ${key.token_prefix}… gets 401 from now on (on every gateway within a second). This cannot be undone.${
      isSession ? ' This is the console’s own session key; the console creates a new one when it needs it.' : ''
    }`,
    confirmLabel: 'Revoke key',
  });
  if (!confirmed) {
    announce('Revocation cancelled.');
    return;
  }
  clearError();
  try {
    await busy([button], () => admin.revokeKey(requireAdminToken(), currentWorkspace().id, key.id));
    announce(`Key “${key.name}” (${key.token_prefix}…) revoked.`);
    await loadKeys();
  } catch (err) {
    showError(err, 'Could not revoke the key');
  }
}

/** When the chosen expiry is, as RFC 3339, or null for never. */
function expiryFromForm(): string | null {
  const choice = byId<HTMLSelectElement>('key-expiry').value;
  if (choice === '') return null;
  if (choice !== 'custom') return new Date(Date.now() + Number(choice) * 1000).toISOString();
  const local = byId<HTMLInputElement>('key-expiry-custom').value;
  if (!local) throw new Error('Choose the expiry date and time, or another expiry.');
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) throw new Error('The expiry date is not a valid date.');
  return date.toISOString();
}

async function createKey(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const name = byId<HTMLInputElement>('key-name').value.trim();
  const unrestricted = form().querySelector<HTMLInputElement>('input[name="key-access"]:checked')?.value === 'unrestricted';
  const scopes = [...form().querySelectorAll<HTMLInputElement>('input[name="key-scope"]:checked')].map((box) => box.value);
  try {
    if (!name) throw new Error('Give the key a name.');
    if (!unrestricted && scopes.length === 0) throw new Error('Choose at least one scope, or Unrestricted access.');
    const expiresAt = expiryFromForm();
    const submit = form().querySelector<HTMLButtonElement>('button[type="submit"]');
    const created = await busy([submit], () =>
      admin.createKey(requireAdminToken(), currentWorkspace().id, { name, scopes: unrestricted ? null : scopes, expires_at: expiresAt }),
    );
    showToken(created.token);
    form().reset();
    syncAccess();
    syncExpiry();
    announce(`Key “${created.name}” created. Copy its token now: it is shown only once.`);
    await loadKeys();
  } catch (err) {
    showError(err, 'Could not create the key');
  }
}

function showToken(token: string): void {
  const input = byId<HTMLInputElement>('new-token-value');
  input.value = token;
  byId('new-token').hidden = false;
  byId('new-token-title').focus();
}

/** Drops the shown token from the page (it exists nowhere else in the console). */
export function hideToken(): void {
  byId<HTMLInputElement>('new-token-value').value = '';
  byId('new-token').hidden = true;
}

function syncAccess(): void {
  const unrestricted = form().querySelector<HTMLInputElement>('input[name="key-access"]:checked')?.value === 'unrestricted';
  byId<HTMLFieldSetElement>('key-scopes').disabled = unrestricted;
}

function syncExpiry(): void {
  const custom = byId<HTMLSelectElement>('key-expiry').value === 'custom';
  byId('key-expiry-custom-field').hidden = !custom;
  byId<HTMLInputElement>('key-expiry-custom').required = custom;
}

export function initKeysView(): void {
  renderScopeCheckboxes();
  form().addEventListener('submit', (e) => void createKey(e));
  for (const radio of form().querySelectorAll<HTMLInputElement>('input[name="key-access"]')) radio.addEventListener('change', syncAccess);
  byId('key-expiry').addEventListener('change', syncExpiry);
  byId('keys-refresh').addEventListener('click', () => {
    clearError();
    loadKeys().then(
      () => announce('Key list refreshed.'),
      (err: unknown) => showError(err, 'Could not load the keys'),
    );
  });
  byId('keys-more').addEventListener('click', () => void loadMoreKeys().catch((err: unknown) => showError(err, 'Could not load more keys')));
  byId('new-token-copy').addEventListener('click', () => {
    void copyText(byId<HTMLInputElement>('new-token-value')).then((copied) =>
      copied ? announce('Token copied to the clipboard.') : showError(new Error('The browser refused to copy; select the token and copy it by hand.')),
    );
  });
  byId('new-token-done').addEventListener('click', () => {
    hideToken();
    announce('Token removed from the page.');
    byId('key-name').focus();
  });
}

export function resetKeysView(): void {
  hideToken();
  clear(tbody());
  nextCursor = null;
  byId('keys-more').hidden = true;
  form().reset();
  syncAccess();
  syncExpiry();
}
