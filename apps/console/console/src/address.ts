// The address bar follows what the console shows (route.format.ts says what each address is): a
// view that opens or closes an object sets its address as a new history entry, so back and forward
// work and the address can be shared. While the console itself follows an address (a link opened,
// back or forward), the views' own address changes are ignored: the address is already there.
import { routeHash, workspaceRoute, type Detail, type Route, type Tab } from './route.format.js';
import { currentWorkspace } from './session.js';

/** The hash the console shows or last followed; another one in the address bar is the user's. */
let shown = location.hash;
let following = 0;

/** Puts `route` in the address bar: a new history entry, or in place of the current one. */
export function setAddress(route: Route, replace = false): void {
  if (following > 0) return;
  const hash = routeHash(route);
  shown = hash;
  if (hash === location.hash) return;
  const url = `${location.pathname}${location.search}${hash}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

/** The address of a tab of the open workspace, or of an object it shows. */
export function setWorkspaceAddress(tab: Tab, detail?: Detail): void {
  if (following > 0) return;
  setAddress(workspaceRoute(currentWorkspace().id, tab, detail));
}

/** Runs `work`, the way to the address now in the address bar; the views' address changes meanwhile are ignored. */
export async function followAddress<T>(work: () => Promise<T>): Promise<T> {
  shown = location.hash;
  following++;
  try {
    return await work();
  } finally {
    following--;
  }
}

/** Whether the address bar holds an address the console did not set or follow yet (the user went there). */
export const addressMoved = (): boolean => location.hash !== shown;
