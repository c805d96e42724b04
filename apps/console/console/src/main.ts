// The workspace console: sign in with the admin token, choose or create a workspace, then manage
// its API keys (admin API), events, pipelines, warehouse and webhook endpoints (public API with a session key),
// and see its quotas (admin API).
import { admin, allPages, PlatformApiError, loadMeta, type Page, type Workspace } from './api.js';
import { busy, byId, clear, formToggleById, h, time, type FormToggle } from './dom.js';
import { addressMoved, followAddress, setAddress, setWorkspaceAddress } from './address.js';
import { followEventAddress, initEventsView, leaveEvents, resetEventsView, showEvents, shownEvent } from './events.view.js';
import { followKeyAddress, initKeysView, loadKeys, resetKeysView, shownKey } from './keys.view.js';
import { announce, clearError, showError } from './messages.js';
import { newestFirst, searchNote, workspaceMatches } from './search.format.js';
import { followPipelineAddress, initPipelinesView, resetPipelinesView, showPipelines, shownPipeline } from './pipelines.view.js';
import { initQuotasView, resetQuotasView, showQuotas } from './quotas.view.js';
import { parseRoute, TABS, type Detail, type Route, type Tab } from './route.format.js';
import {
  closeWorkspace,
  currentWorkspace,
  openWorkspace,
  openWorkspaceId,
  requireAdminToken,
  revokeOnPageHide,
  setMeta,
  signedIn,
  signIn,
  signOut,
} from './session.js';
import { followWarehouseAddress, initWarehouseView, resetWarehouseView, showWarehouse, shownWarehouse } from './warehouse.view.js';
import { followWebhookAddress, initWebhooksView, resetWebhooksView, showWebhooks, shownWebhook } from './webhooks.view.js';

type View = 'sign-in' | 'workspaces' | 'console';

const VIEWS: Record<View, { section: string; heading: string }> = {
  'sign-in': { section: 'sign-in-view', heading: 'sign-in-title' },
  workspaces: { section: 'workspace-view', heading: 'workspace-title' },
  console: { section: 'workspace-console', heading: 'console-title' },
};

let workspacesCursor: string | null = null;
/** Every workspace read so far, in the API's order (oldest first); shown newest first, filtered by the search. */
let workspacesRead: Workspace[] = [];
/** An address opened before signing in: followed once signed in. */
let pending: Route | null = null;
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

function renderWorkspaces(): void {
  const list = byId('workspace-list');
  const query = byId<HTMLInputElement>('workspace-search').value;
  const shown = newestFirst(workspacesRead).filter((workspace) => workspaceMatches(workspace, query));
  list.replaceChildren(...shown.map(workspaceItem));
  if (workspacesRead.length === 0) list.append(h('li', {}, 'No workspace yet: create the first one with New workspace.'));
  byId('workspaces-note').textContent =
    workspacesRead.length === 0 ? '' : searchNote(['workspace', 'workspaces'], shown.length, workspacesRead.length, query, workspacesCursor === null);
  byId('workspaces-more').hidden = workspacesCursor === null;
}

/** Reads the workspaces from `first` on (up to 5 pages of 100 at a time) and shows them. */
async function readWorkspaces(first: Page<Workspace> | null, replace: boolean): Promise<void> {
  const token = requireAdminToken();
  const head = first ?? (await admin.listWorkspaces(token, workspacesCursor));
  const rest = head.next_cursor === null ? { items: [], next: null } : await allPages((cursor) => admin.listWorkspaces(token, cursor), 4, head.next_cursor);
  workspacesRead = [...(replace ? [] : workspacesRead), ...head.data, ...rest.items];
  workspacesCursor = rest.next;
  renderWorkspaces();
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
    await readWorkspaces(page, true);
    const target = pending;
    pending = null;
    if (target?.view === 'workspace') return await follow(target);
    showView('workspaces');
    setAddress({ view: 'workspaces' }, true);
    announce('Signed in. Choose or create a workspace.');
  } catch (err) {
    if (err instanceof PlatformApiError && err.status === 401) showError(new Error('The admin token was not accepted.'));
    else showError(err, 'Could not sign in');
    input.focus();
  }
}

/** Opens a workspace on its keys tab; false when it could not be opened (the error is shown). */
async function enterWorkspace(workspace: Workspace, button: HTMLButtonElement | null): Promise<boolean> {
  clearError();
  try {
    await busy([button], () => openWorkspace(workspace));
  } catch (err) {
    showError(err, 'Could not open the workspace');
    return false;
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
  return true;
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

/** Back to the workspace list: the views stop reading and the session key is revoked. */
async function leaveWorkspace(): Promise<void> {
  // The views stop reading first: no timer's call runs while the session key is being revoked.
  resetViews();
  await closeWorkspace();
  try {
    workspacesCursor = null;
    await readWorkspaces(null, true);
  } catch (err) {
    showError(err, 'Could not list the workspaces');
  }
  showView('workspaces');
}

async function onSwitchWorkspace(): Promise<void> {
  clearError();
  const name = currentWorkspace().name;
  await leaveWorkspace();
  setAddress({ view: 'workspaces' });
  announce(`Left “${name}”; its console session key was revoked.`);
}

async function onSignOut(): Promise<void> {
  clearError();
  resetViews();
  await busy([byId<HTMLButtonElement>('sign-out')], () => signOut());
  clear(byId('workspace-list'));
  workspacesRead = [];
  workspacesCursor = null;
  byId<HTMLInputElement>('workspace-search').value = '';
  byId('workspaces-note').textContent = '';
  showView('sign-in');
  setAddress({ view: 'sign-in' });
  announce('Signed out: the console session key was revoked and the admin token forgotten.');
}

const TAB_IDS = TABS.map((tab) => `tab-${tab}`);

/** What each tab shows on its own, for its address. */
const SHOWN: Record<Tab, () => Detail | undefined> = {
  keys: shownKey,
  pipelines: shownPipeline,
  events: shownEvent,
  warehouse: shownWarehouse,
  webhooks: shownWebhook,
  quotas: () => undefined,
};

/** The ARIA tabs pattern: one tab in the tab order, arrow keys move between tabs. The address follows the tab. */
function selectTab(tabId: string, focus = true): void {
  const chosen = TABS[TAB_IDS.indexOf(tabId)];
  if (chosen) setWorkspaceAddress(chosen, SHOWN[chosen]());
  for (const id of TAB_IDS) {
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
  for (const id of TAB_IDS) {
    const tab = byId(id);
    tab.addEventListener('click', () => selectTab(id));
    tab.addEventListener('keydown', (event) => {
      const at = TAB_IDS.indexOf(id);
      const next =
        event.key === 'ArrowRight'
          ? TAB_IDS[(at + 1) % TAB_IDS.length]
          : event.key === 'ArrowLeft'
            ? TAB_IDS[(at + TAB_IDS.length - 1) % TAB_IDS.length]
            : event.key === 'Home'
              ? TAB_IDS[0]
              : event.key === 'End'
                ? TAB_IDS[TAB_IDS.length - 1]
                : undefined;
      if (!next) return;
      event.preventDefault();
      selectTab(next);
    });
  }
}

/** Shows what a tab's address names, or closes what the tab shows when it names nothing. */
async function followDetail(tab: Tab, detail: Detail | undefined): Promise<void> {
  switch (tab) {
    case 'keys':
      return followKeyAddress(detail?.kind === 'key' ? detail.id : undefined);
    case 'pipelines':
      return followPipelineAddress(detail?.kind === 'pipeline' ? detail : undefined);
    case 'events':
      return followEventAddress(detail?.kind === 'event' ? detail.id : undefined);
    case 'warehouse':
      return followWarehouseAddress(detail);
    case 'webhooks':
      return followWebhookAddress(detail?.kind === 'endpoint' ? detail : undefined);
    case 'quotas':
      return;
  }
}

/**
 * Shows what an address names (a link opened, back or forward): the workspace (opened by id, with
 * a new session key when it is another one), its tab and the object. Signed out, the address waits
 * for the sign-in.
 */
async function follow(route: Route | null): Promise<void> {
  clearError();
  if (route === null) return showError(new Error('This address names nothing the console shows (a mistyped or cut link?).'));
  if (!signedIn()) {
    pending = route;
    if (route.view === 'workspace') announce('Sign in to open the address.');
    return;
  }
  // The way there (the workspace's first tab, then the tab) sets no address of its own.
  const arrived = await followAddress(async () => {
    if (route.view !== 'workspace') {
      if (openWorkspaceId() !== null) await leaveWorkspace();
      else showView('workspaces');
      return false;
    }
    if (openWorkspaceId() !== route.workspaceId) {
      let workspace: Workspace;
      try {
        workspace = await admin.getWorkspace(requireAdminToken(), route.workspaceId);
      } catch (err) {
        showError(err, 'Could not open the address');
        return false;
      }
      if (openWorkspaceId() !== null) resetViews();
      if (!(await enterWorkspace(workspace, null))) return false;
    }
    selectTab(`tab-${route.tab}`, route.detail === undefined);
    return true;
  });
  if (!arrived || route.view !== 'workspace') return;
  // The object: the view sets the address it shows, the one followed, so what the user does
  // meanwhile (another tab while an event loads) still gets its own address.
  try {
    await followDetail(route.tab, route.detail);
  } catch (err) {
    showError(err, 'Could not open the address');
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
    readWorkspaces(null, false).then(
      () => undefined,
      (err: unknown) => showError(err, 'Could not list more workspaces'),
    );
  });
  byId('workspace-search').addEventListener('input', renderWorkspaces);
  byId('sign-out').addEventListener('click', () => void onSignOut());
  byId('switch-workspace').addEventListener('click', () => void onSwitchWorkspace());
  window.addEventListener('pagehide', revokeOnPageHide);
  // Back, forward, or an address typed or pasted: followed once (both events come for a hash change).
  const onAddress = () => {
    if (addressMoved()) void follow(parseRoute(location.hash));
  };
  window.addEventListener('popstate', onAddress);
  window.addEventListener('hashchange', onAddress);
  if (location.hash) void follow(parseRoute(location.hash));
  document.body.dataset.ready = 'true';
}

void boot();
