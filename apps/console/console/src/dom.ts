// DOM helpers. Text always goes through textContent or attributes: the page's CSP requires
// Trusted Types, so an accidental innerHTML would throw instead of becoming markup.

import { formatInZone, formatTime } from './time.format.js';

type Child = Node | string | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element with attributes, listeners (`on<event>` keys) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** The element with this id; a missing one is a bug in index.html, so it throws. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/**
 * A `<time>` showing a timestamp in the reader's locale and zone, the zone named ("03:00:05 CET"),
 * or in `zone` (a schedule's own) with UTC beside it; a dash when there is none.
 */
export function time(iso: string | null | undefined, empty = '—', zone?: string): Node {
  if (!iso) return document.createTextNode(empty);
  return h('time', { datetime: iso, title: iso }, zone ? formatInZone(iso, zone) : formatTime(iso));
}

export function badge(text: string, kind = text): HTMLElement {
  return h('span', { class: `badge ${kind}` }, text);
}

/**
 * A table cell that names its column on phones (see `table.responsive` in console.css); its
 * content is one element so it stays in one grid column there.
 */
export function cell(label: string, ...children: Child[]): HTMLTableCellElement {
  return h('td', { 'data-label': label }, h('span', {}, ...children));
}

/** Disables the buttons while `work` runs, so a double click cannot send the request twice. */
export async function busy<T>(controls: (HTMLButtonElement | HTMLFieldSetElement | null)[], work: () => Promise<T>): Promise<T> {
  const touched = controls.filter((c): c is HTMLButtonElement | HTMLFieldSetElement => c !== null && !c.disabled);
  for (const control of touched) control.disabled = true;
  try {
    return await work();
  } finally {
    for (const control of touched) control.disabled = false;
  }
}

/** A short form of an id for headings and messages. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** A create form that opens from its button (which says whether it is open) and closes on Cancel or once it was sent. */
export interface FormToggle {
  open(): void;
  close(): void;
}

/** Lists come first on every tab: each create form stays hidden until its button opens it. */
export function formToggle(button: HTMLButtonElement, form: HTMLFormElement, cancel: HTMLButtonElement, onClose?: () => void): FormToggle {
  const close = () => {
    form.hidden = true;
    form.reset();
    button.setAttribute('aria-expanded', 'false');
    onClose?.();
  };
  const open = () => {
    form.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    form.querySelector<HTMLElement>('input:not([type="radio"]):not([type="checkbox"]), select')?.focus();
  };
  button.addEventListener('click', () => (form.hidden ? open() : close()));
  cancel.addEventListener('click', () => {
    close();
    button.focus();
  });
  return { open, close };
}

/** The same, for a form of the page (body.html) named by its ids. */
export const formToggleById = (buttonId: string, formId: string, cancelId: string, onClose?: () => void): FormToggle =>
  formToggle(byId<HTMLButtonElement>(buttonId), byId<HTMLFormElement>(formId), byId<HTMLButtonElement>(cancelId), onClose);
