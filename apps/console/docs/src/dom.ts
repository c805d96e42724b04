// The one place views become DOM: elements and text nodes only, never a string parsed as HTML (the
// page's CSP enforces Trusted Types, which would refuse it anyway).
import type { ViewNode } from './view.js';

export function render(node: ViewNode): Node {
  if (typeof node === 'string') return document.createTextNode(node);
  const element = document.createElement(node.tag);
  for (const [name, value] of Object.entries(node.attributes)) element.setAttribute(name, value);
  element.append(...node.children.map(render));
  const { lazy } = node;
  if (lazy) {
    element.addEventListener('toggle', () => {
      if (element.dataset.rendered) return;
      element.dataset.rendered = 'yes';
      element.append(render(lazy()));
    });
  }
  return element;
}

/** The element with this id, which the page always has. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}
