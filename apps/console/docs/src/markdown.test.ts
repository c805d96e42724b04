import { inline, markdown } from './markdown.js';
import { elements, find, html } from './test/html.js';

describe('markdown', () => {
  test('lines of a paragraph join with a space; a blank line starts a new paragraph', () => {
    expect(html(markdown('one\ntwo\n\nthree'))).toBe('<div class="markdown"><p>one two</p><p>three</p></div>');
  });

  test('nothing to say is an empty div', () => {
    expect(html(markdown(undefined))).toBe('<div class="markdown"></div>');
    expect(html(markdown(''))).toBe('<div class="markdown"></div>');
  });

  test('a `##` heading is one level below the base, within h1 to h6', () => {
    expect(html(markdown('## Errors'))).toBe('<div class="markdown"><h3>Errors</h3></div>');
    expect(html(markdown('## Errors', 2))).toBe('<div class="markdown"><h2>Errors</h2></div>');
    expect(html(markdown('# Top', 2))).toBe('<div class="markdown"><h1>Top</h1></div>');
    expect(html(markdown('###### Deep'))).toBe('<div class="markdown"><h6>Deep</h6></div>');
    expect(html(markdown('####### not a heading'))).toBe('<div class="markdown"><p>####### not a heading</p></div>');
  });

  test('"- " lines are one list, ending the paragraph before them', () => {
    expect(html(markdown('Codes:\n- `a`\n  - b\nafter'))).toBe(
      '<div class="markdown"><p>Codes:</p><ul><li><code>a</code></li><li>b</li></ul><p>after</p></div>',
    );
  });

  test('a table: the first row is the head, the separator row is dropped', () => {
    expect(html(markdown('| bucket | limit |\n|---|---|\n| `default` | 600 |\n| `ingest` | 60 |'))).toBe(
      '<div class="markdown"><table>' +
        '<thead><tr><th scope="col">bucket</th><th scope="col">limit</th></tr></thead>' +
        '<tbody><tr><td><code>default</code></td><td>600</td></tr><tr><td><code>ingest</code></td><td>60</td></tr></tbody>' +
        '</table></div>',
    );
  });
});

describe('inline markup', () => {
  test('code, bold (with code inside) and text around them', () => {
    expect(inline('Send `Authorization: Bearer plk_…` **always, `exactly`** now').map(html).join('')).toBe(
      'Send <code>Authorization: Bearer plk_…</code> <strong>always, <code>exactly</code></strong> now',
    );
  });

  test('links to this page or a path of this origin are links', () => {
    expect(inline('[keys](#/events/op/createKey) and [console](/console)').map(html).join('')).toBe(
      '<a href="#/events/op/createKey">keys</a> and <a href="/console">console</a>',
    );
  });

  test('a link anywhere else stays text with its URL shown: no other origin, no script URL', () => {
    const hostile = '[a](https://example.com/x) [b](//example.com) [c](javascript:alert(1)) [d](JavaScript:alert(2)) [e](data:text/html,x) [f](/\\example.com)';
    expect(find(markdown(hostile), 'a')).toEqual([]);
    expect(inline(hostile).map(html).join('')).toBe(
      'a (https://example.com/x) b (//example.com) c (javascript:alert(1)) d (JavaScript:alert(2)) e (data:text/html,x) f (/\\example.com)',
    );
  });

  test('markup in the text stays text: tags, entities and quotes are shown, never parsed', () => {
    const view = markdown('<script>alert(1)</script> & <img src=x onerror="alert(2)">\n\n- <b>bold?</b>\n\n| <th> | "q" |\n|-|-|\n| <td> | &amp; |');
    expect(elements(view).map((e) => e.tag)).toEqual(['div', 'p', 'ul', 'li', 'table', 'thead', 'tr', 'th', 'th', 'tbody', 'tr', 'td', 'td']);
    expect(html(view)).toBe(
      '<div class="markdown"><p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x onerror="alert(2)"&gt;</p>' +
        '<ul><li>&lt;b&gt;bold?&lt;/b&gt;</li></ul>' +
        '<table><thead><tr><th scope="col">&lt;th&gt;</th><th scope="col">"q"</th></tr></thead>' +
        '<tbody><tr><td>&lt;td&gt;</td><td>&amp;amp;</td></tr></tbody></table></div>',
    );
  });
});
