// The workspace console: sign in with the admin token, choose or create a workspace, then manage
// its API keys (admin API), events, pipelines, warehouse and webhook endpoints (public API with a session key),
// and see its quotas (admin API).
import { admin, PlatformApiError, loadMeta, type Page, type Workspace } from './api.js';
import { busy, byId, clear, formToggleById, h, time, type FormToggle } from './dom.js';
import { initEventsView, leaveEvents, resetEventsView, showEvents } from './events.view.js';
import { initKeysView, loadKeys, resetKeysView } from './keys.view.js';
import { announce, clearError, showError } from './messages.js';
import { initPipelinesView, resetPipelinesView, showPipelines } from './pipelines.view.js';
import { initQuotasView, resetQuotasView, showQuotas } from './quotas.view.js';
import { closeWorkspace, currentWorkspace, openWorkspace, requireAdminToken, revokeOnPageHide, setMeta, signIn, signOut } from './session.js';
import { initWarehouseView, resetWarehouseView, showWarehouse } from './warehouse.view.js';
import { initWebhooksView, resetWebhooksView, showWebhooks } from './webhooks.view.js';

type View = 'sign-in' | 'workspaces' | 'console';

const VIEWS: Record<View, { section: string; heading: string }> = {
  'sign-in': { section: 'sign-in-view', heading: 'sign-in-title' },
  workspaces: { section: 'workspace-view', heading: 'workspace-title' },
  console: { section: 'workspace-console', heading: 'console-title' },
};

let workspacesCursor: string | null = null;
let workspaceForm: FormToggle | undefined;

function showView(view: View): void {
  for (const [name, ids] of Object.entries(VIEWS)) byId(ids.section).hidden = name !== view;
  byId('session-bar').hidden = view === 'sign-in';
  byId('switch-workspace').hidden = view !== 'console';
  if (view !== 'console') byId('session-workspace-name').textContent = '';
  byId(VIEWS[view].heading).focus();
}

function workspaceItem(workspace: Workspace): HTMLLIElement {
  const open = h('button', { type: 'button', 'aria-label': `Open workspace ${workspace.name}` }, 'Open');
  open.addEventListener('click', () => void enterWorkspace(workspace, open));
  return h(
    'li',
    {},
    h(
      'span',
      {},
      h('strong', {}, workspace.name),
      ' ',
      h('code', { title: workspace.id }, workspace.id.slice(0, 8)),
      ' · created ',
      time(workspace.created_at),
    ),
    open,
  );
}

function renderWorkspaces(page: Page<Workspace>, replace: boolean): void {
  const list = byId('workspace-list');
  if (replace) clear(list);
  list.append(...page.data.map(workspaceItem));
  if (replace && page.data.length === 0) list.append(h('li', {}, 'No workspace yet: create the first one with New workspace.'));
  workspacesCursor = page.next_cursor;
  byId('workspaces-more').hidden = workspacesCursor === null;
}

async function onSignIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const input = byId<HTMLInputElement>('admin-token');
  const token = input.value.trim();
  // The token leaves the DOM at once; from here on it lives only in session.ts.
  input.value = '';
  if (!token) return showError(new Error('Enter the admin token.'));
  try {
    const submit = (event.currentTarget as HTMLFormElement).querySelector<HTMLButtonElement>('button[type="submit"]');
    const page = await busy([submit], () => signIn(token));
    renderWorkspaces(page, true);
    showView('workspaces');
    announce('Signed in. Choose or create a workspace.');
  } catch (err) {
    if (err instanceof PlatformApiError && err.status === 401) showError(new Error('The admin token was not accepted.'));
    else showError(err, 'Could not sign in');
    input.focus();
  }
}

async function enterWorkspace(workspace: Workspace, button: HTMLButtonElement | null): Promise<void> {
  clearError();
  try {
    await busy([button], () => openWorkspace(workspace));
  } catch (err) {
    return showError(err, 'Could not open the workspace');
  }
  resetViews();
  byId('session-workspace-name').textContent = workspace.name;
  showView('console');
  selectTab('tab-keys', false);
  announce(`Workspace “${workspace.name}” open. The console works through a session key valid for one hour, revoked when you sign out.`);
  try {
    await loadKeys();
  } catch (err) {
    showError(err, 'Could not load the keys');
  }
}

async function onCreateWorkspace(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const input = byId<HTMLInputElement>('workspace-name');
  const name = input.value.trim();
  if (!name) return showError(new Error('Give the workspace a name.'));
  const submit = (event.currentTarget as HTMLFormElement).querySelector<HTMLButtonElement>('button[type="submit"]');
  try {
    const workspace = await busy([submit], () => admin.createWorkspace(requireAdminToken(), name));
    workspaceForm?.close();
    announce(`Workspace “${workspace.name}” created.`);
    await enterWorkspace(workspace, submit);
  } catch (err) {
    showError(err, 'Could not create the workspace');
  }
}

function resetViews(): void {
  resetKeysView();
  resetEventsView();
  resetPipelinesView();
  resetWarehouseView();
  resetWebhooksView();
  resetQuotasView();
}

async function onSwitchWorkspace(): Promise<void> {
  clearError();
  const name = currentWorkspace().name;
  // The views stop reading first: no timer's call runs while the session key is being revoked.
  resetViews();
  await closeWorkspace();
  try {
    renderWorkspaces(await admin.listWorkspaces(requireAdminToken()), true);
  } catch (err) {
    showError(err, 'Could not list the workspaces');
  }
  showView('workspaces');
  announce(`Left “${name}”; its console session key was revoked.`);
}

async function onSignOut(): Promise<void> {
  clearError();
  resetViews();
  await busy([byId<HTMLButtonElement>('sign-out')], () => signOut());
  clear(byId('workspace-list'));
  showView('sign-in');
  announce('Signed out: the console session key was revoked and the admin token forgotten.');
}

const TABS = ['tab-keys', 'tab-pipelines', 'tab-events', 'tab-warehouse', 'tab-webhooks', 'tab-quotas'];

/** The ARIA tabs pattern: one tab in the tab order, arrow keys move between tabs. */
function selectTab(tabId: string, focus = true): void {
  for (const id of TABS) {
    const tab = byId(id);
    const selected = id === tabId;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    byId(tab.getAttribute('aria-controls')!).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  // The events tab reads its open event on a timer only while it is shown.
  if (tabId === 'tab-events') void showEvents();
  else leaveEvents();
  if (tabId === 'tab-pipelines') void showPipelines();
  if (tabId === 'tab-warehouse') void showWarehouse();
  if (tabId === 'tab-webhooks') void showWebhooks();
  if (tabId === 'tab-quotas') void showQuotas();
}

function initTabs(): void {
  for (const id of TABS) {
    const tab = byId(id);
    tab.addEventListener('click', () => selectTab(id));
    tab.addEventListener('keydown', (event) => {
      const at = TABS.indexOf(id);
      const next =
        event.key === 'ArrowRight'
          ? TABS[(at + 1) % TABS.length]
          : event.key === 'ArrowLeft'
            ? TABS[(at + TABS.length - 1) % TABS.length]
            : event.key === 'Home'
              ? TABS[0]
              : event.key === 'End'
                ? TABS[TABS.length - 1]
                : undefined;
      if (!next) return;
      event.preventDefault();
      selectTab(next);
    });
  }
}

async function boot(): Promise<void> {
  try {
    setMeta(await loadMeta());
  } catch (err) {
    return showError(err);
  }
  initKeysView();
  initEventsView();
  initPipelinesView();
  initWarehouseView();
  initWebhooksView();
  initQuotasView();
  initTabs();
  byId('sign-in-form').addEventListener('submit', (e) => void onSignIn(e));
  workspaceForm = formToggleById('workspace-new', 'workspace-form', 'workspace-form-cancel');
  byId('workspace-form').addEventListener('submit', (e) => void onCreateWorkspace(e));
  byId('workspaces-more').addEventListener('click', () => {
    admin.listWorkspaces(requireAdminToken(), workspacesCursor).then(
      (page) => renderWorkspaces(page, false),
      (err: unknown) => showError(err, 'Could not list more workspaces'),
    );
  });
  byId('sign-out').addEventListener('click', () => void onSignOut());
  byId('switch-workspace').addEventListener('click', () => void onSwitchWorkspace());
  window.addEventListener('pagehide', revokeOnPageHide);
  document.body.dataset.ready = 'true';
}

void boot();
