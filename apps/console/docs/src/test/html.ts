// Reading views in tests: the markup a browser shows for what dom.ts builds (the escaping of
// outerHTML), their elements and their text.
import type { ViewElement, ViewNode } from '../view.js';

const escapeText = (text: string): string =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\u00a0/g, '&nbsp;');
const escapeAttribute = (value: string): string =>
  value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/\u00a0/g, '&nbsp;');

/** The view as the browser serializes it; a lazy part is left out, as it is until its details open. */
export function html(node: ViewNode | null): string {
  if (node === null) return '';
  if (typeof node === 'string') return escapeText(node);
  const attributes = Object.entries(node.attributes).map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`);
  return `<${node.tag}${attributes.join('')}>${node.children.map(html).join('')}</${node.tag}>`;
}

/** Every element of a view, depth first, lazy parts opened. */
export function elements(node: ViewNode | null): ViewElement[] {
  if (node === null || typeof node === 'string') return [];
  return [node, ...node.children.flatMap(elements), ...(node.lazy ? elements(node.lazy()) : [])];
}

/** The view's text, as `textContent` reads it (lazy parts left out). */
export function text(node: ViewNode | null): string {
  if (node === null) return '';
  return typeof node === 'string' ? node : node.children.map(text).join('');
}

/** The elements with this tag whose attributes include these. */
export function find(node: ViewNode | null, tag: string, attributes: Record<string, string> = {}): ViewElement[] {
  return elements(node).filter((e) => e.tag === tag && Object.entries(attributes).every(([name, value]) => e.attributes[name] === value));
}
