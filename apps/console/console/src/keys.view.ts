// API keys: create (name, scopes, rate limits, expiry; token shown once), list, revoke with
// confirmation; an open key shows its usage chart, edits its name, scopes and rate limits, and rolls
// (a new token shown once, the old one working for a chosen overlap).
import { admin, allPages, PlatformApiError, type ApiKey, type RateLimits } from './api.js';
import { copyText } from './clipboard.js';
import { confirmAction } from './confirm.js';
import { badge, busy, byId, cell, clear, formToggleById, h, time, type FormToggle } from './dom.js';
import { describeLimits, keyState, oldTokenOutcome } from './keys.format.js';
import { accessFields, limitFields, limitsFromForm, scopeChoices, scopesFromForm } from './keys.fields.js';
import { usageView, type UsageView } from './keys.usage.js';
import { setWorkspaceAddress } from './address.js';
import { announce, clearError, showError } from './messages.js';
import type { Detail } from './route.format.js';
import { keyMatches, newestFirst, searchNote } from './search.format.js';
import { browserZone } from './time.format.js';
import { currentWorkspace, getMeta, requireAdminToken, sessionKeyId } from './session.js';

/** How long the old token of a rolled key keeps working (the API's default is 24 hours). */
const ROLL_OVERLAPS = [
  { seconds: 0, label: 'No: it stops at once', span: 'no time' },
  { seconds: 3600, label: 'For 1 hour', span: '1 hour' },
  { seconds: 86_400, label: 'For 24 hours', span: '24 hours' },
  { seconds: 604_800, label: 'For 7 days', span: '7 days' },
] as const;
const DEFAULT_ROLL_OVERLAP = 86_400;

/** What an open key's forms change: the key as last read or saved, and the heading naming it. */
interface ShownKey {
  key: ApiKey;
  title: HTMLElement;
}

interface OpenKey extends ShownKey {
  region: HTMLElement;
  usage: UsageView;
}

let nextCursor: string | null = null;
let keysRead: ApiKey[] = [];
let open: OpenKey | undefined;
let keyForm: FormToggle | undefined;

const form = () => byId<HTMLFormElement>('key-form');
const tbody = () => byId<HTMLTableElement>('keys-table').tBodies[0]!;

const describeScopes = (scopes: string[] | null): string => (scopes === null ? 'unrestricted' : scopes.join(', '));

function keyStatus(key: ApiKey): HTMLElement {
  const state = keyState(key, Date.now());
  if (state === 'revoked') return h('span', {}, badge('revoked'), ' ', time(key.revoked_at));
  return badge(state);
}

function keyRow(key: ApiKey): HTMLTableRowElement {
  const isSession = key.id === sessionKeyId();
  const label = `${key.name} (${key.token_prefix}…)`;
  const openButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      'aria-label': `Open key ${label}`,
      onclick: () => {
        clearError();
        openKey(key);
      },
    },
    'Open',
  );
  const revoke = key.revoked_at
    ? null
    : h(
        'button',
        { type: 'button', class: 'danger', 'aria-label': `Revoke ${label}`, onclick: (e: Event) => void revokeKey(key, e.currentTarget as HTMLButtonElement) },
        'Revoke',
      );
  return h(
    'tr',
    { 'data-key-id': key.id },
    cell('Name', key.name, isSession ? h('span', {}, ' ', badge('this console', 'self')) : null),
    cell('Prefix', h('code', { class: 'nowrap' }, `${key.token_prefix}…`)),
    cell('Scopes', key.scopes === null ? h('em', {}, 'all (unrestricted)') : key.scopes.join(', ')),
    cell('Limits', describeLimits(key.rate_limits, getMeta().rate_limit_buckets)),
    cell('Created', time(key.created_at)),
    cell('Expires', time(key.expires_at, 'never')),
    cell('Last used', time(key.last_used_at, 'never')),
    cell('Status', keyStatus(key)),
    cell('', h('span', { class: 'actions' }, openButton, revoke)),
  );
}

/** What an open key's region shows of it: a change in any of these redraws the region. */
const shownFacts = (key: ApiKey): string => JSON.stringify([key.name, key.scopes, key.rate_limits, key.expires_at, key.revoked_at, keyState(key, Date.now())]);

/** The keys read (oldest first, as listed), shown newest first and filtered by the search box. */
function renderKeys(): void {
  const query = byId<HTMLInputElement>('key-search').value;
  const shown = newestFirst(keysRead).filter((key) => keyMatches(key, query));
  tbody().replaceChildren(...shown.map(keyRow));
  byId('keys-note').textContent = searchNote(['key', 'keys'], shown.length, keysRead.length, query, nextCursor === null);
  byId('keys-more').hidden = nextCursor === null;
}

function showKeys(keys: ApiKey[], replace: boolean): void {
  keysRead = replace ? keys : [...keysRead, ...keys];
  renderKeys();
  // The open key as just read (a roll set its expiry, someone revoked it meanwhile).
  const current = open && keys.find((key) => key.id === open!.key.id);
  if (current && shownFacts(current) !== shownFacts(open!.key)) openKey(current, false);
}

/** Reads the keys from `cursor` on: up to 5 pages of 100 (the admin API lists oldest first and has no search). */
async function readKeys(cursor: string | null): Promise<ApiKey[]> {
  const token = requireAdminToken();
  const workspaceId = currentWorkspace().id;
  const { items, next } = await allPages((at) => admin.listKeys(token, workspaceId, at), 5, cursor);
  nextCursor = next;
  return items;
}

/** Reloads the key list of the current workspace (500 keys; more on demand). */
export async function loadKeys(): Promise<void> {
  showKeys(await readKeys(null), true);
}

async function loadMoreKeys(): Promise<void> {
  showKeys(await readKeys(nextCursor), false);
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

const keyTitle = (key: ApiKey): string => `Key “${key.name}”`;

/** The open key's name, access, scopes and rate limits; saved with PATCH, then its row shows the key as saved. */
function editForm(entry: ShownKey): HTMLFormElement {
  const { key } = entry;
  const prefix = `edit-${key.id}`;
  const titleId = `${prefix}-title`;
  const name = h('input', { id: `${prefix}-name`, type: 'text', required: true, maxlength: 200, autocomplete: 'off', value: key.name });
  const limits = h('fieldset', { class: 'limits' }, ...limitFields(prefix, key.rate_limits));
  const submit = h('button', { type: 'submit' }, 'Save changes');
  const editor = h(
    'form',
    { class: 'key-edit stack', 'aria-labelledby': titleId },
    h('h4', { id: titleId }, 'Edit the key'),
    h('div', { class: 'field' }, h('label', { for: name.id }, 'Name'), name),
    ...accessFields(prefix, key.scopes),
    limits,
    submit,
  );
  editor.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const changes = () => {
      if (!name.value.trim()) throw new Error('Give the key a name.');
      return { name: name.value.trim(), scopes: scopesFromForm(editor, prefix), rate_limits: limitsFromForm(limits) };
    };
    busy([submit], async () => {
      const saved = await admin.updateKey(requireAdminToken(), currentWorkspace().id, key.id, changes());
      keysRead = keysRead.map((read) => (read.id === saved.id ? saved : read));
      tbody().querySelector(`tr[data-key-id="${key.id}"]`)?.replaceWith(keyRow(saved));
      entry.key = saved;
      entry.title.textContent = keyTitle(saved);
      announce(
        `Key “${saved.name}” saved: scopes ${describeScopes(saved.scopes)}; rate limits ${describeLimits(saved.rate_limits, getMeta().rate_limit_buckets)}.`,
      );
    }).catch((err: unknown) => showError(err, 'Could not save the key'));
  });
  return editor;
}

/** A roll: the overlap chosen here, confirmed in the dialog; the new token is shown once, and the list read again. */
function rollForm(entry: ShownKey): HTMLFormElement {
  const { key } = entry;
  const titleId = `roll-${key.id}-title`;
  const overlap = h(
    'select',
    { id: `roll-${key.id}-overlap` },
    ...ROLL_OVERLAPS.map(({ seconds, label }) => h('option', { value: seconds, selected: seconds === DEFAULT_ROLL_OVERLAP }, label)),
  );
  const submit = h('button', { type: 'submit' }, 'Roll key');
  const roller = h(
    'form',
    { class: 'key-roll stack', 'aria-labelledby': titleId },
    h('h4', { id: titleId }, 'Roll the key'),
    h('p', { class: 'hint' }, 'A new key with the same name, scopes and rate limits replaces this one; its token is shown once.'),
    h('div', { class: 'field' }, h('label', { for: overlap.id }, 'The old token keeps working'), overlap),
    submit,
  );
  roller.addEventListener('submit', (event) => {
    event.preventDefault();
    const choice = ROLL_OVERLAPS.find(({ seconds }) => seconds === Number(overlap.value)) ?? ROLL_OVERLAPS[2];
    void rollKey(entry.key, choice, submit);
  });
  return roller;
}

async function rollKey(key: ApiKey, overlap: (typeof ROLL_OVERLAPS)[number], button: HTMLButtonElement): Promise<void> {
  const outcome = oldTokenOutcome(key.expires_at, overlap, Date.now());
  const confirmed = await confirmAction({
    title: `Roll “${key.name}”?`,
    message: `A new key with the same name, scopes and rate limits is created and its token shown once. The old token ${key.token_prefix}… ${outcome}.`,
    confirmLabel: 'Roll key',
  });
  if (!confirmed) {
    announce('Roll cancelled.');
    return;
  }
  clearError();
  try {
    const created = await busy([button], () => admin.rollKey(requireAdminToken(), currentWorkspace().id, key.id, overlap.seconds));
    showToken(created.token);
    announce(`Key “${key.name}” rolled: copy the new token now, it is shown only once. The old token ${outcome}.`);
    await loadKeys();
  } catch (err) {
    showError(err, 'Could not roll the key');
    // Revoked or expired meanwhile: the list shows it as it is now.
    if (err instanceof PlatformApiError && err.status === 409) await loadKeys().catch(() => undefined);
  }
}

function keyRegion(key: ApiKey): OpenKey {
  const titleId = `key-${key.id}-title`;
  const state = keyState(key, Date.now());
  const close = h('button', { type: 'button', class: 'secondary' }, 'Close key');
  const fact = (term: string, value: Node | string) => [h('dt', {}, term), h('dd', { 'data-fact': term }, value)];
  const shown: ShownKey = { key, title: h('h3', { id: titleId, tabindex: -1 }, keyTitle(key)) };
  const usage = usageView(key);
  const changes =
    key.id === sessionKeyId()
      ? [h('p', { class: 'hint' }, 'This is the console’s own session key: the console replaces it itself, so it is not edited or rolled here.')]
      : [
          state === 'revoked' ? h('p', { class: 'hint' }, 'A revoked key can no longer be edited or rolled.') : editForm(shown),
          state === 'active' ? rollForm(shown) : null,
          state === 'expired' ? h('p', { class: 'hint' }, 'An expired key can no longer be rolled.') : null,
        ];
  const region = h(
    'section',
    { class: 'card key', 'aria-labelledby': titleId, 'data-key-id': key.id },
    h('header', {}, shown.title, close),
    h(
      'dl',
      { class: 'facts' },
      ...fact('Prefix', h('code', {}, `${key.token_prefix}…`)),
      ...fact('Status', keyStatus(key)),
      ...fact('Expires', time(key.expires_at, 'never')),
    ),
    usage.section,
    ...changes,
  );
  close.addEventListener('click', () => {
    closeKey();
    setWorkspaceAddress('keys');
    tbody().querySelector<HTMLButtonElement>(`tr[data-key-id="${key.id}"] button`)?.focus();
  });
  // The same object the forms hold, so a save shows in `open.key`.
  return Object.assign(shown, { region, usage });
}

/** Shows one key below the list (its usage read at once); another open key closes. */
function openKey(key: ApiKey, focus = true): void {
  closeKey();
  open = keyRegion(key);
  byId('key-detail').replaceChildren(open.region);
  if (focus) {
    open.region.querySelector('h3')?.focus();
    setWorkspaceAddress('keys', { kind: 'key', id: key.id });
  }
  open.usage.refresh().catch((err: unknown) => showError(err, 'Could not read the usage'));
}

/** Shows the key an address names (read by id, so one on a later page opens too), or none. */
export async function followKeyAddress(keyId: string | undefined): Promise<void> {
  if (keyId === undefined) return closeKey();
  if (open?.key.id === keyId) return open.title.focus();
  openKey(await admin.getKey(requireAdminToken(), currentWorkspace().id, keyId));
}

/** The open key, for the tab's address. */
export const shownKey = (): Detail | undefined => (open ? { kind: 'key', id: open.key.id } : undefined);

function closeKey(): void {
  open?.usage.destroy();
  open = undefined;
  clear(byId('key-detail'));
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
  try {
    if (!name) throw new Error('Give the key a name.');
    const scopes = scopesFromForm(form(), 'key');
    const rateLimits: RateLimits | null = limitsFromForm(byId('key-limits'));
    const expiresAt = expiryFromForm();
    const submit = form().querySelector<HTMLButtonElement>('button[type="submit"]');
    const created = await busy([submit], () =>
      admin.createKey(requireAdminToken(), currentWorkspace().id, { name, scopes, expires_at: expiresAt, rate_limits: rateLimits }),
    );
    keyForm?.close();
    showToken(created.token);
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
  byId('key-expiry-custom-label').textContent = `Expiry date and time (${browserZone()})`;
  byId('key-scope-groups').replaceChildren(...scopeChoices('key', []));
  byId('key-limits').append(...limitFields('key', null));
  keyForm = formToggleById('key-new', 'key-form', 'key-form-cancel', () => {
    syncAccess();
    syncExpiry();
  });
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
  byId('key-search').addEventListener('input', renderKeys);
  byId('keys-more').addEventListener('click', () => void loadMoreKeys().catch((err: unknown) => showError(err, 'Could not load more keys')));
  byId('new-token-copy').addEventListener('click', () => {
    void copyText(byId<HTMLInputElement>('new-token-value')).then((copied) =>
      copied ? announce('Token copied to the clipboard.') : showError(new Error('The browser refused to copy; select the token and copy it by hand.')),
    );
  });
  byId('new-token-done').addEventListener('click', () => {
    hideToken();
    announce('Token removed from the page.');
    byId('key-new').focus();
  });
}

export function resetKeysView(): void {
  hideToken();
  closeKey();
  clear(tbody());
  nextCursor = null;
  keysRead = [];
  byId<HTMLInputElement>('key-search').value = '';
  byId('keys-note').textContent = '';
  byId('keys-more').hidden = true;
  keyForm?.close();
}
