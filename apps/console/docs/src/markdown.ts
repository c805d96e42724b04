// The small Markdown subset the documents use: paragraphs, headings, "- " lists, tables, `code`,
// **bold**, and links to this page or this origin (any other link stays text with its URL shown).
import { el, heading, type ViewElement, type ViewNode } from './view.js';

const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
/** A fragment of this page or a path of this origin; `//host` and `/\host` (a browser reads `\` as `/`) are another origin. */
const LOCAL_LINK = /^(#|\/(?![/\\]))/;

/** One line's inline markup. */
export function inline(text: string): ViewNode[] {
  const out: ViewNode[] = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const [whole, code, bold, label = '', href = ''] = match;
    if (match.index > last) out.push(text.slice(last, match.index));
    if (code !== undefined) out.push(el('code', {}, code));
    else if (bold !== undefined) out.push(el('strong', {}, ...inline(bold)));
    else if (LOCAL_LINK.test(href)) out.push(el('a', { href }, label));
    else out.push(`${label} (${href})`);
    last = match.index + whole.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function tableRow(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

const LIST_ITEM = /^\s*- /;

/** A description as a `div.markdown`; `headingBase` is the level a `##` heading gets plus one. */
export function markdown(text: string | undefined, headingBase = 3): ViewElement {
  const blocks: ViewElement[] = [];
  if (!text) return el('div', { class: 'markdown' });
  const lines = String(text).split('\n');
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length) blocks.push(el('p', {}, ...inline(paragraph.join(' '))));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const title = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!line.trim()) {
      flush();
    } else if (title) {
      flush();
      const [, hashes = '', words = ''] = title;
      blocks.push(el(heading(headingBase + hashes.length - 2), {}, ...inline(words)));
    } else if (LIST_ITEM.test(line)) {
      flush();
      const items: ViewElement[] = [];
      for (; i < lines.length && LIST_ITEM.test(lines[i] ?? ''); i++) items.push(el('li', {}, ...inline((lines[i] ?? '').replace(LIST_ITEM, ''))));
      i--;
      blocks.push(el('ul', {}, items));
    } else if (line.startsWith('|')) {
      flush();
      const rows: string[] = [];
      for (; i < lines.length && (lines[i] ?? '').startsWith('|'); i++) rows.push(lines[i] ?? '');
      i--;
      const [head = '', , ...body] = rows;
      blocks.push(
        el(
          'table',
          {},
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              tableRow(head).map((cell) => el('th', { scope: 'col' }, ...inline(cell))),
            ),
          ),
          el(
            'tbody',
            {},
            body.map((row) =>
              el(
                'tr',
                {},
                tableRow(row).map((cell) => el('td', {}, ...inline(cell))),
              ),
            ),
          ),
        ),
      );
    } else {
      paragraph.push(line.trim());
    }
  }
  flush();
  return el('div', { class: 'markdown' }, blocks);
}
