// The API reference: reads each service's OpenAPI 3.1 document from /docs/{service}.json and
// renders it. The DOM is built from nodes and text only (the page's CSP enforces Trusted Types,
// so no string can become HTML), and nothing is fetched from another origin.

const MAX_DEPTH = 8;

/** @type {{ services: { name: string, prefix: string, document: string }[], documents: Map<string, { doc?: any, error?: string }>, current: string | null }} */
const state = { services: [], documents: new Map(), current: null };

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// ---------------------------------------------------------------------------------------------
// A small Markdown subset (what the documents use): paragraphs, ## headings, "- " lists, tables,
// `code`, **bold** and links to this page or this origin.

function inline(text) {
  const out = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    if (match[1] !== undefined) out.push(el('code', {}, match[1]));
    else if (match[2] !== undefined) out.push(el('strong', {}, ...inline(match[2])));
    else if (/^(#|\/(?!\/))/.test(match[4])) out.push(el('a', { href: match[4] }, match[3]));
    else out.push(`${match[3]} (${match[4]})`);
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function tableRow(line) {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
}

function markdown(text, headingBase = 3) {
  const root = el('div', { class: 'markdown' });
  if (!text) return root;
  const lines = String(text).split('\n');
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) root.append(el('p', {}, ...inline(paragraph.join(' '))));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!line.trim()) {
      flush();
    } else if (heading) {
      flush();
      root.append(el(`h${Math.min(6, headingBase + heading[1].length - 2)}`, {}, ...inline(heading[2])));
    } else if (/^\s*- /.test(line)) {
      flush();
      const list = el('ul');
      while (i < lines.length && /^\s*- /.test(lines[i])) list.append(el('li', {}, ...inline(lines[i++].replace(/^\s*- /, ''))));
      i--;
      root.append(list);
    } else if (/^\|/.test(line)) {
      flush();
      const rows = [];
      while (i < lines.length && /^\|/.test(lines[i])) rows.push(lines[i++]);
      i--;
      const [head, , ...body] = rows;
      root.append(
        el(
          'table',
          {},
          el('thead', {}, el('tr', {}, tableRow(head).map((cell) => el('th', { scope: 'col' }, ...inline(cell))))),
          el('tbody', {}, body.map((row) => el('tr', {}, tableRow(row).map((cell) => el('td', {}, ...inline(cell)))))),
        ),
      );
    } else {
      paragraph.push(line.trim());
    }
  }
  flush();
  return root;
}

/** The first paragraph of a description, for one-line summaries. */
function firstLine(text) {
  return String(text ?? '').split('\n\n')[0];
}

// ---------------------------------------------------------------------------------------------
// References and schemas.

function pointer(doc, ref) {
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return undefined;
  let node = doc;
  for (const part of ref.slice(2).split('/')) {
    if (node === undefined || node === null) return undefined;
    node = node[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function deref(doc, value) {
  let node = value;
  for (let guard = 0; node && node.$ref && guard < 32; guard++) node = pointer(doc, node.$ref);
  return node ?? {};
}

function refName(ref) {
  return decodeURIComponent(ref.split('/').pop() ?? ref);
}

/** Branches of a union, without the `null` one. */
function branches(schema) {
  const list = schema.oneOf ?? schema.anyOf;
  return Array.isArray(list) ? list.filter((branch) => branch.type !== 'null') : undefined;
}

function isNullable(schema) {
  const list = schema.oneOf ?? schema.anyOf;
  return (Array.isArray(schema.type) && schema.type.includes('null')) || (Array.isArray(list) && list.some((branch) => branch.type === 'null'));
}

function typeLabel(doc, schema) {
  if (!schema || typeof schema !== 'object') return 'any';
  if (schema.$ref) return refName(schema.$ref);
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const union = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(union)) {
    const labels = union.map((branch) => typeLabel(doc, branch));
    // Objects told apart by a constant field read better by that field.
    const keys = union.map((branch) => (branch.$ref ? undefined : discriminatorLabel(branch)));
    return keys.every(Boolean) ? `object (${keys.join(' | ')})` : labels.join(' | ');
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return schema.properties ? 'object' : 'any';
  const inner = (value) => {
    const label = typeLabel(doc, value);
    return label.includes(' | ') ? `(${label})` : label;
  };
  return types
    .map((type) => {
      if (type === 'array') return `array of ${inner(schema.items)}`;
      if (type === 'object' && !schema.properties && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        return `map of ${inner(schema.additionalProperties)}`;
      }
      return schema.format && type !== 'null' ? `${type} (${schema.format})` : type;
    })
    .join(' | ');
}

function constraintText(schema) {
  const parts = [];
  const range = (min, max, unit) => {
    if (min !== undefined && max !== undefined) parts.push(min === max ? `exactly ${min}${unit}` : `${min}-${max}${unit}`);
    else if (min !== undefined) parts.push(`at least ${min}${unit}`);
    else if (max !== undefined) parts.push(`at most ${max}${unit}`);
  };
  range(schema.minLength, schema.maxLength, ' characters');
  range(schema.minimum, schema.maximum, '');
  range(schema.minItems, schema.maxItems, ' items');
  range(schema.minProperties, schema.maxProperties, ' keys');
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.not && 'const' in schema.not) parts.push(`not ${JSON.stringify(schema.not.const)}`);
  if (schema.pattern) parts.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts;
}

/** The object schemas a value may be (through refs, arrays and unions); empty for plain values. */
function objectShapes(doc, schema, depth = 0) {
  if (depth > MAX_DEPTH) return [];
  const node = deref(doc, schema);
  if (node.properties) return [node];
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('array') && node.items) return objectShapes(doc, node.items, depth + 1);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') return objectShapes(doc, node.additionalProperties, depth + 1);
  const union = branches(node);
  return union ? union.flatMap((branch) => objectShapes(doc, branch, depth + 1)) : [];
}

/** A property table of an object schema; nested objects open on demand. */
function propertiesTable(doc, schema, depth) {
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const resolved = deref(doc, property);
    const plain = property.$ref ? resolved : property;
    const constraints = constraintText(branches(plain)?.length === 1 ? { ...branches(plain)[0], ...plain } : plain);
    const described = property.description ?? resolved.description;
    const cell = el(
      'td',
      {},
      described ? markdown(described) : null,
      constraints.length ? el('p', { class: 'constraints' }, constraints.join(' · ')) : null,
      nested(doc, property, depth, name),
    );
    return el(
      'tr',
      {},
      el('td', {}, el('code', {}, name), required.has(name) ? el('span', { class: 'required' }, 'required') : null),
      el('td', {}, el('span', { class: 'type' }, typeLabel(doc, property) + (isNullable(plain) && !typeLabel(doc, property).includes('null') ? ' | null' : ''))),
      cell,
    );
  });
  const extra = schema.additionalProperties;
  const note =
    extra === false ? el('p', { class: 'constraints' }, 'No other fields.') : null;
  return [
    el('table', { class: 'props' }, el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Field'), el('th', { scope: 'col' }, 'Type'), el('th', { scope: 'col' }, 'Description'))), el('tbody', {}, rows)),
    note,
  ];
}

/** A collapsed view of the objects a property holds, rendered when first opened. */
function nested(doc, property, depth, name) {
  if (depth >= MAX_DEPTH) return null;
  const shapes = objectShapes(doc, property);
  if (shapes.length === 0) return null;
  const details = el('details', { class: 'nested' }, el('summary', {}, `Fields of ${name}`));
  details.addEventListener(
    'toggle',
    () => {
      if (details.dataset.rendered) return;
      details.dataset.rendered = 'yes';
      details.append(el('div', {}, schemaView(doc, property, depth + 1)));
    },
    { once: false },
  );
  return details;
}

/** A schema: its properties, its union branches, or its type and constraints. */
function schemaView(doc, schema, depth = 0) {
  const node = deref(doc, schema);
  const parts = [];
  if (node.description && depth === 0) parts.push(markdown(node.description));
  const union = branches(node);
  if (union && union.length > 1 && union.some((branch) => objectShapes(doc, branch).length)) {
    parts.push(el('p', {}, node.oneOf ? 'One of:' : 'Any of:'));
    for (const branch of union) {
      const resolved = deref(doc, branch);
      const label = branch.$ref ? refName(branch.$ref) : discriminatorLabel(resolved) ?? typeLabel(doc, branch);
      const details = el('details', { class: 'nested', open: depth === 0 }, el('summary', {}, label), el('div', {}, schemaView(doc, branch, depth + 1)));
      parts.push(details);
    }
    return el('div', {}, parts);
  }
  if (node.properties) return el('div', {}, parts, propertiesTable(doc, node, depth));
  const shapes = objectShapes(doc, node);
  if (shapes.length === 1) {
    parts.push(el('p', {}, el('span', { class: 'type' }, typeLabel(doc, schema))));
    parts.push(propertiesTable(doc, shapes[0], depth));
    return el('div', {}, parts);
  }
  const constraints = constraintText(node);
  parts.push(el('p', {}, el('span', { class: 'type' }, typeLabel(doc, schema)), constraints.length ? ` · ${constraints.join(' · ')}` : ''));
  return el('div', {}, parts);
}

/** `connector: "sample"` for a branch told apart by a constant property. */
function discriminatorLabel(schema) {
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property && 'const' in property) return `${name}: ${JSON.stringify(property.const)}`;
  }
  return undefined;
}

function example(value, label = 'Example') {
  return el('details', { class: 'nested' }, el('summary', {}, label), el('pre', {}, el('code', {}, JSON.stringify(value, null, 2))));
}

// ---------------------------------------------------------------------------------------------
// Operations, webhooks, schemas.

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operationsOf(doc) {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) out.push({ path, method, operation: item[method] });
  }
  return out;
}

function parametersTable(doc, parameters) {
  const rows = parameters.map((parameter) => {
    const p = deref(doc, parameter);
    const constraints = constraintText(p.schema ?? {});
    return el(
      'tr',
      {},
      el('td', {}, el('code', {}, p.name), p.required ? el('span', { class: 'required' }, 'required') : null),
      el('td', {}, p.in),
      el('td', {}, el('span', { class: 'type' }, typeLabel(doc, p.schema))),
      el('td', {}, p.description ? markdown(p.description) : null, constraints.length ? el('p', { class: 'constraints' }, constraints.join(' · ')) : null),
    );
  });
  return el(
    'table',
    { class: 'props' },
    el('thead', {}, el('tr', {}, ['Name', 'In', 'Type', 'Description'].map((title) => el('th', { scope: 'col' }, title)))),
    el('tbody', {}, rows),
  );
}

function headersTable(doc, headers) {
  const rows = Object.entries(headers).map(([name, header]) => {
    const h = deref(doc, header);
    return el(
      'tr',
      {},
      el('td', {}, el('code', {}, name)),
      el('td', {}, el('span', { class: 'type' }, typeLabel(doc, h.schema))),
      el('td', {}, markdown(header.description ?? h.description ?? '')),
    );
  });
  return el('table', { class: 'props' }, el('thead', {}, el('tr', {}, ['Header', 'Type', 'Description'].map((title) => el('th', { scope: 'col' }, title)))), el('tbody', {}, rows));
}

function bodyView(doc, body, title) {
  const resolved = deref(doc, body);
  const media = resolved.content?.['application/json'];
  if (!media) return null;
  return el(
    'div',
    {},
    el('h4', {}, title, resolved.required ? el('span', { class: 'required' }, 'required') : ''),
    resolved.description ? markdown(resolved.description) : null,
    schemaView(doc, media.schema ?? {}),
    media.example !== undefined ? example(media.example) : null,
  );
}

function responsesView(doc, responses) {
  return Object.entries(responses ?? {}).map(([status, response]) => {
    const r = deref(doc, response);
    const [title, ...rest] = String(r.description ?? '').split('\n\n');
    const media = r.content?.['application/json'];
    const ok = /^[123]/.test(status);
    return el(
      'details',
      { class: 'response', open: ok },
      el('summary', {}, el('span', { class: `status-code ${ok ? 'ok' : 'err'}` }, status), ...inline(title ?? '')),
      rest.length ? markdown(rest.join('\n\n')) : null,
      r.headers && Object.keys(r.headers).length
        ? el('details', { class: 'nested' }, el('summary', {}, `Headers (${Object.keys(r.headers).join(', ')})`), headersTable(doc, r.headers))
        : null,
      // Every error has the same body: its schema stays folded, its example shows what this one says.
      media?.schema && !ok ? el('details', { class: 'nested' }, el('summary', {}, `Body: ${typeLabel(doc, media.schema)}`), schemaView(doc, media.schema)) : null,
      media?.schema && ok ? schemaView(doc, media.schema) : null,
      media?.example !== undefined ? example(media.example) : null,
    );
  });
}

function operationView(doc, prefix, { path, method, operation }) {
  const id = `op-${operation.operationId ?? `${method}-${path}`}`;
  const parameters = operation.parameters ?? [];
  return el(
    'section',
    { class: 'operation', id, 'data-search': `${method} ${path} ${operation.summary ?? ''} ${operation['x-required-scope'] ?? ''}`.toLowerCase() },
    el('h3', {}, operation.summary ?? `${method.toUpperCase()} ${path}`),
    el('p', { class: 'signature' }, el('span', { class: `method ${method}` }, method.toUpperCase()), el('span', { class: 'path' }, prefix + path)),
    markdown(operation.description),
    parameters.length ? [el('h4', {}, 'Parameters'), parametersTable(doc, parameters)] : null,
    operation.requestBody ? bodyView(doc, operation.requestBody, 'Request body') : null,
    el('h4', {}, 'Responses'),
    responsesView(doc, operation.responses),
  );
}

function webhookView(doc, name, operation) {
  return el(
    'section',
    { class: 'operation', id: `webhook-${name}`, 'data-search': `${name} ${operation.summary ?? ''}`.toLowerCase() },
    el('h3', {}, operation.summary ?? name),
    el('p', { class: 'signature' }, el('span', { class: 'method post' }, 'POST'), el('span', { class: 'path' }, `your endpoint · ${name}`)),
    markdown(operation.description),
    operation.parameters?.length ? [el('h4', {}, 'Headers'), parametersTable(doc, operation.parameters)] : null,
    bodyView(doc, operation.requestBody, 'Body'),
    el('h4', {}, 'Your answer'),
    responsesView(doc, operation.responses),
  );
}

function schemaCard(doc, name, schema) {
  return el(
    'section',
    { class: 'schema-card', id: `schema-${name}`, 'data-search': name.toLowerCase() },
    el('h3', {}, name),
    schemaView(doc, schema),
    Array.isArray(schema.examples) && schema.examples.length ? example(schema.examples[0]) : null,
  );
}

/** Operations grouped by tag, in the document's tag order. */
function groups(doc) {
  const byTag = new Map((doc.tags ?? []).map((tag) => [tag.name, { tag, operations: [] }]));
  for (const entry of operationsOf(doc)) {
    const name = entry.operation.tags?.[0] ?? 'Other';
    if (!byTag.has(name)) byTag.set(name, { tag: { name }, operations: [] });
    byTag.get(name).operations.push(entry);
  }
  return [...byTag.values()].filter((group) => group.operations.length);
}

function serviceView(service, doc) {
  const server = doc.servers?.[0]?.url ?? service.prefix;
  const baseUrl = new URL(server, location.origin).href.replace(/\/$/, '');
  const parts = [
    el(
      'header',
      { class: 'service-head' },
      el('h1', { tabindex: '-1', id: 'service-title' }, doc.info?.title ?? service.name),
      el('p', { class: 'meta' }, `Version ${doc.info?.version ?? '?'} · OpenAPI ${doc.openapi} · `, el('a', { href: service.document }, 'document (JSON)')),
      el('p', {}, 'Base URL: ', el('code', {}, baseUrl)),
      markdown(doc.info?.description, 2),
    ),
  ];
  const scheme = doc.components?.securitySchemes?.bearer;
  if (scheme) parts.push(el('h2', {}, 'Authentication'), markdown(scheme.description));
  for (const group of groups(doc)) {
    parts.push(el('h2', { id: `tag-${group.tag.name}` }, group.tag.name), group.tag.description ? markdown(group.tag.description) : null);
    for (const entry of group.operations) parts.push(operationView(doc, baseUrl.replace(location.origin, ''), entry));
  }
  const webhooks = Object.entries(doc.webhooks ?? {});
  if (webhooks.length) {
    parts.push(el('h2', { id: 'tag-webhook-events' }, 'Webhook events'));
    const tag = doc.tags?.find((t) => t.name === 'Webhook events');
    if (tag?.description) parts.push(markdown(tag.description));
    for (const [name, item] of webhooks) if (item.post) parts.push(webhookView(doc, name, item.post));
  }
  const schemas = Object.entries(doc.components?.schemas ?? {});
  if (schemas.length) {
    parts.push(el('h2', { id: 'tag-schemas' }, 'Schemas'));
    for (const [name, schema] of schemas) parts.push(schemaCard(doc, name, schema));
  }
  return el('article', { 'aria-labelledby': 'service-title' }, parts);
}

function tocView(service, doc) {
  const link = (kind, id, ...label) => el('li', { 'data-search': label.join(' ').toLowerCase() }, el('a', { href: `#/${service.name}/${kind}/${id}` }, ...label));
  const out = groups(doc).map((group) =>
    el(
      'div',
      { class: 'toc-group' },
      el('h2', {}, group.tag.name),
      el(
        'ul',
        {},
        group.operations.map(({ path, method, operation }) =>
          link('op', operation.operationId ?? `${method}-${path}`, el('span', { class: `method ${method}` }, method.toUpperCase()), ` ${operation.summary ?? path}`),
        ),
      ),
    ),
  );
  const webhooks = Object.entries(doc.webhooks ?? {});
  if (webhooks.length) out.push(el('div', { class: 'toc-group' }, el('h2', {}, 'Webhook events'), el('ul', {}, webhooks.map(([name]) => link('webhook', name, name)))));
  const schemas = Object.keys(doc.components?.schemas ?? {});
  if (schemas.length) out.push(el('div', { class: 'toc-group' }, el('h2', {}, 'Schemas'), el('ul', {}, schemas.map((name) => link('schema', name, name)))));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Page: service tabs, routing by hash (#/service/kind/id), filter.

function renderTabs() {
  $('service-tabs').replaceChildren(
    ...state.services.map((service) => {
      const entry = state.documents.get(service.name);
      const title = entry?.doc?.info?.title ?? service.name;
      return el(
        'li',
        {},
        el(
          'a',
          { href: `#/${service.name}`, 'aria-current': service.name === state.current ? 'page' : undefined, class: entry?.error ? 'unavailable' : undefined },
          title,
          entry?.error ? ' (unavailable)' : '',
        ),
      );
    }),
  );
}

function renderUnavailable(service, error) {
  const retry = el('button', { type: 'button' }, 'Try again');
  retry.addEventListener('click', async () => {
    retry.disabled = true;
    await loadDocument(service);
    state.current = null;
    route();
  });
  $('toc').replaceChildren();
  $('reference').replaceChildren(
    el(
      'section',
      { class: 'notice' },
      el('h1', { tabindex: '-1', id: 'service-title' }, `${service.name}: unavailable`),
      el('p', {}, `${error} The other services' references are unaffected.`),
      retry,
    ),
  );
}

function showService(name) {
  const service = state.services.find((s) => s.name === name) ?? state.services.find((s) => state.documents.get(s.name)?.doc) ?? state.services[0];
  if (!service) return;
  if (state.current === service.name) return;
  state.current = service.name;
  const entry = state.documents.get(service.name);
  renderTabs();
  $('filter').value = '';
  if (!entry?.doc) {
    renderUnavailable(service, entry?.error ?? 'not loaded');
    return;
  }
  $('toc').replaceChildren(...tocView(service, entry.doc));
  $('reference').replaceChildren(serviceView(service, entry.doc));
  document.title = `${entry.doc.info?.title ?? service.name} · API reference`;
}

function route() {
  const [, name, kind, ...rest] = decodeURIComponent(location.hash).split('/');
  const before = state.current;
  showService(name);
  const target = kind && rest.length ? document.getElementById(`${kind}-${rest.join('/')}`) : null;
  if (target) {
    for (let node = target.parentElement; node; node = node.parentElement) if (node instanceof HTMLDetailsElement) node.open = true;
    target.scrollIntoView({ block: 'start' });
  } else if (before !== state.current) {
    window.scrollTo(0, 0);
  }
}

function applyFilter() {
  const query = $('filter').value.trim().toLowerCase();
  for (const node of document.querySelectorAll('#toc li, #reference [data-search]')) {
    node.hidden = query !== '' && !node.getAttribute('data-search').includes(query);
  }
}

async function loadDocument(service) {
  try {
    const res = await fetch(service.document, { headers: { accept: 'application/json' } });
    const body = await res.json().catch(() => undefined);
    if (!res.ok) throw new Error(body?.error?.message ?? `The ${service.name} service did not give its API document (HTTP ${res.status}).`);
    state.documents.set(service.name, { doc: body });
  } catch (err) {
    // A network failure says "Failed to fetch": make it a sentence like the gateway's messages.
    const message = err instanceof Error ? err.message : String(err);
    state.documents.set(service.name, { error: /[.!?]$/.test(message) ? message : `${message}.` });
  }
}

async function main() {
  const status = $('status');
  try {
    const res = await fetch('/docs/services.json', { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    state.services = (await res.json()).services;
  } catch (err) {
    status.textContent = `The list of services could not be loaded (${err instanceof Error ? err.message : err}).`;
    return;
  }
  await Promise.all(state.services.map(loadDocument));
  const unavailable = state.services.filter((service) => state.documents.get(service.name)?.error);
  status.textContent = unavailable.length ? `Unavailable right now: ${unavailable.map((s) => s.name).join(', ')}.` : '';
  status.hidden = unavailable.length === 0;
  window.addEventListener('hashchange', route);
  $('filter').addEventListener('input', applyFilter);
  route();
}

main();
