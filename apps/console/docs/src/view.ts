// The page as data: every view function returns these trees and only dom.ts turns them into nodes.
// A document's strings can only ever be text or attribute values: tag and attribute names are
// constants of the code (`Tag`), so nothing a document says can become markup.

/** The elements the reference is built from. */
export type Tag =
  | 'a'
  | 'article'
  | 'button'
  | 'code'
  | 'details'
  | 'div'
  | 'h1'
  | 'h2'
  | 'h3'
  | 'h4'
  | 'h5'
  | 'h6'
  | 'header'
  | 'li'
  | 'p'
  | 'pre'
  | 'section'
  | 'span'
  | 'strong'
  | 'summary'
  | 'table'
  | 'tbody'
  | 'td'
  | 'th'
  | 'thead'
  | 'tr'
  | 'ul';

export interface ViewElement {
  readonly tag: Tag;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly ViewNode[];
  /** Rendered when the element (a `<details>`) is first opened: deep schemas cost nothing until read. */
  readonly lazy?: () => ViewElement;
}

/** A string is a text node. */
export type ViewNode = string | ViewElement;

/** What `el` accepts as children: nested lists are flattened, and null, undefined and false are left out. */
export type Child = ViewNode | null | undefined | false | readonly Child[];

/** An attribute's value: false, null and undefined leave it out, true sets it empty. */
export type AttributeValue = string | number | boolean | null | undefined;

function flatten(children: readonly Child[], out: ViewNode[] = []): ViewNode[] {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) flatten(child as readonly Child[], out);
    else out.push(child as ViewNode);
  }
  return out;
}

/** An element with attributes and children. */
export function el(tag: Tag, attributes: Readonly<Record<string, AttributeValue>> = {}, ...children: Child[]): ViewElement {
  const set: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    set[name] = value === true ? '' : String(value);
  }
  return { tag, attributes: set, children: flatten(children) };
}

/** A `<details>` whose content is built when it is first opened. */
export function lazyDetails(attributes: Readonly<Record<string, AttributeValue>>, summary: ViewNode, content: () => ViewElement): ViewElement {
  return { ...el('details', attributes, el('summary', {}, summary)), lazy: content };
}

/** `h1` to `h6`, the level kept within them. */
export function heading(level: number): Tag {
  return `h${Math.max(1, Math.min(6, level)) as 1 | 2 | 3 | 4 | 5 | 6}`;
}
