import * as ts from 'typescript';
import { deref, operationsOf, type OpenApiDocument, type OperationEntry, type Schema } from './openapi.js';
import { samplesView } from './operation.view.js';
import { clientSample, credentialOf, curlSample, ExampleValues, operationSamples, sampleRequest, shellQuote, tsLiteral, type SampleTarget } from './samples.js';
import { ticketsDocument } from './test/documents.js';
import { find, text } from './test/html.js';
import { platformDocuments } from './test/platform-documents.js';

const ORIGIN = 'http://127.0.0.1:8080';
const eventsTarget: SampleTarget = { baseUrl: `${ORIGIN}/events/v0`, origin: ORIGIN, service: 'events' };
const tickets = ticketsDocument();
const entryOf = (doc: OpenApiDocument, operationId: string): OperationEntry => operationsOf(doc).find((e) => e.operation.operationId === operationId)!;

describe('samples of one operation, from its document', () => {
  test('a POST: absolute URL under the prefix, the key from the environment, the body example as JSON', () => {
    const doc: OpenApiDocument = {
      ...tickets,
      components: {
        ...tickets.components,
        parameters: {
          ...tickets.components!.parameters,
          PlatformVersion: { name: 'platform-version', in: 'header', schema: { type: 'string', enum: ['2024-12-01'], default: '2024-12-01' } },
          IdempotencyKey: { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
        },
      },
    };
    const issue = entryOf(doc, 'issueTicket');
    issue.operation.parameters = [
      ...issue.operation.parameters!,
      { $ref: '#/components/parameters/PlatformVersion' },
      { $ref: '#/components/parameters/IdempotencyKey' },
    ];
    const { curl, client } = operationSamples(doc, eventsTarget, issue);
    expect(curl).toBe(
      [
        "curl -X POST 'http://127.0.0.1:8080/events/v0/events/3c6f0b7e-5d1a-4f2b-9e8c-7a1d2b3c4d5e/tickets' \\",
        '  -H "Authorization: Bearer $PLATFORM_API_KEY" \\',
        "  -H 'platform-version: 2024-12-01' \\",
        '  -H "Idempotency-Key: $(openssl rand -hex 16)" \\',
        "  -H 'content-type: application/json' \\",
        `  -d '{\n  "holder_name": "Ada Lovelace"\n}'`,
      ].join('\n'),
    );
    expect(client).toBe(
      [
        "import { createClient, unwrap } from '@platform/client';",
        '',
        "const platform = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.PLATFORM_API_KEY! });",
        '// The client sends platform-version: 2024-12-01 and a fresh Idempotency-Key, kept on every retry.',
        "const ticket = await unwrap(platform.events.POST('/events/{id}/tickets', {",
        "  params: { path: { id: '3c6f0b7e-5d1a-4f2b-9e8c-7a1d2b3c4d5e' } },",
        "  body: { holder_name: 'Ada Lovelace' },",
        '}));',
      ].join('\n'),
    );
  });

  test('a GET: no -X, a query parameter with a default shown with it, optional filters without one left out', () => {
    const list = entryOf(tickets, 'listTickets');
    const request = sampleRequest(tickets, eventsTarget, list);
    expect(request.url).toBe('http://127.0.0.1:8080/events/v0/events/3c6f0b7e-5d1a-4f2b-9e8c-7a1d2b3c4d5e/tickets?limit=20');
    expect(curlSample(request).split('\n')[0]).toBe("curl 'http://127.0.0.1:8080/events/v0/events/3c6f0b7e-5d1a-4f2b-9e8c-7a1d2b3c4d5e/tickets?limit=20' \\");
    expect(clientSample(request, eventsTarget)).toContain("platform.events.GET('/events/{id}/tickets', {");
    const withFilter = {
      ...list,
      operation: {
        ...list.operation,
        parameters: [...list.operation.parameters!, { name: 'status', in: 'query', schema: { type: 'string', enum: ['issued'] } }],
      },
    };
    expect(sampleRequest(tickets, eventsTarget, withFilter).query).toEqual({ limit: 20 });
    const required = {
      ...list,
      operation: { ...list.operation, parameters: [{ name: 'q', in: 'query', required: true, schema: { type: 'string', examples: ['a b&c'] } }] },
    };
    expect(sampleRequest(tickets, eventsTarget, required).url).toMatch(/\?q=a\+b%26c$/);
  });

  test('the admin token for the admin scheme, an API key for the bearer one, nothing when the operation needs none', () => {
    const admin: OpenApiDocument = {
      ...tickets,
      security: [{ adminToken: [] }],
      components: { ...tickets.components, securitySchemes: { adminToken: { type: 'http' } } },
    };
    const create = entryOf(admin, 'createEvent');
    expect(credentialOf(admin, create.operation)).toEqual({ kind: 'admin-token', variable: 'PLATFORM_ADMIN_TOKEN' });
    expect(credentialOf(tickets, create.operation)).toEqual({ kind: 'api-key', variable: 'PLATFORM_API_KEY' });
    expect(credentialOf(tickets, { ...create.operation, security: [] })).toBeNull();
    expect(curlSample(sampleRequest(tickets, eventsTarget, { ...create, operation: { ...create.operation, security: [] } }))).not.toContain('Authorization');
    const target = { ...eventsTarget, baseUrl: `${ORIGIN}/admin/v1`, service: 'admin' };
    const { curl, client } = operationSamples(admin, target, create);
    expect(curl).toContain('-H "Authorization: Bearer $PLATFORM_ADMIN_TOKEN"');
    expect(client).toContain("const admin = createAdminClient({ baseUrl: 'http://127.0.0.1:8080', adminToken: process.env.PLATFORM_ADMIN_TOKEN! });");
    expect(client).toContain("await unwrap(admin.POST('/events'));");
    const far = clientSample(sampleRequest(admin, target, create), { ...target, origin: 'https://gateway.platform.internal.example:8443' });
    expect(far).toContain(
      "const admin = createAdminClient({\n  baseUrl: 'https://gateway.platform.internal.example:8443',\n  adminToken: process.env.PLATFORM_ADMIN_TOKEN!,\n});",
    );
  });

  test('a body without an example is made from its schema: required fields, with examples, constants, defaults, enums and formats', () => {
    const doc: OpenApiDocument = {
      openapi: '3.1.0',
      components: { schemas: { Where: { type: 'object', properties: { gate: { type: 'string', default: 'main' } }, required: ['gate'] } } },
    };
    const schema: Schema = {
      type: 'object',
      required: ['name', 'kind', 'at', 'ids', 'count', 'where', 'mode', 'nullable', 'flag'],
      properties: {
        name: { type: 'string', examples: ['Ada'] },
        kind: { const: 'sample' },
        at: { type: 'string', format: 'date-time' },
        ids: { type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 2 },
        count: { type: 'integer', minimum: 5, maximum: 9 },
        where: { $ref: '#/components/schemas/Where' },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        nullable: { anyOf: [{ type: 'null' }, { type: 'string', minLength: 10, maxLength: 12 }] },
        flag: { type: 'boolean' },
        optional: { type: 'string' },
      },
    };
    expect(new ExampleValues(doc).of(schema)).toEqual({
      name: 'Ada',
      kind: 'sample',
      at: '2024-12-01T09:30:00.000Z',
      ids: ['3c6f0b7e-5d1a-4f2b-9e8c-7a1d2b3c4d5e', '9b2e4d6f-8a0c-4e1b-a3d5-c7e9f1a2b4c6'],
      count: 5,
      where: { gate: 'main' },
      mode: 'fast',
      nullable: 'example---',
      flag: false,
    });
    // An optional body with nothing required and no example is not sent (an empty POST counts as `{}`); a required one is.
    const post: OperationEntry = {
      path: '/x',
      method: 'post',
      operation: { requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { a: {} } } } } } },
    };
    expect(sampleRequest(doc, eventsTarget, post).body).toBeUndefined();
    expect(curlSample(sampleRequest(doc, eventsTarget, post))).not.toContain('-d');
    post.operation.requestBody!.required = true;
    expect(sampleRequest(doc, eventsTarget, post).body).toEqual({});
  });

  test("a document's text stays one shell word and one TypeScript string, whatever quotes it holds", () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(tsLiteral({ "it's": 'a\'b"c\n', 'two words': [1, null, true] })).toBe(`{ 'it\\'s': 'a\\'b"c\\n', 'two words': [1, null, true] }`);
    const hostile: OperationEntry = {
      path: '/x',
      method: 'post',
      operation: { requestBody: { required: true, content: { 'application/json': { example: { note: "'; rm -rf / #" } } } } },
    };
    const curl = curlSample(sampleRequest(tickets, eventsTarget, hostile));
    expect(curl).toContain(`-d '{\n  "note": "'\\''; rm -rf / #"\n}'`);
  });

  test('the view: a curl block and a client block, each with a copy button, as text', () => {
    const view = samplesView(tickets, eventsTarget, entryOf(tickets, 'issueTicket'));
    expect(find(view, 'div', { class: 'sample' }).map((d) => d.attributes['data-sample'])).toEqual(['curl', 'client']);
    expect(find(view, 'button').map((b) => b.attributes['data-copy'])).toEqual(['curl', 'client']);
    expect(text(find(view, 'pre')[0]!)).toMatch(/^curl -X POST 'http:\/\/127\.0\.0\.1:8080\/events\/v0\/events\//);
  });
});

/** The operation's path as a pattern for a URL's path: each `{param}` one segment. */
function pathPattern(prefix: string, path: string): RegExp {
  const escaped = (prefix + path).replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/{[^}]+}/g, '[^/?#]+')}$`);
}

describe('every operation of every document the page shows (events, warehouse, pipelines, admin)', () => {
  const documents = platformDocuments();
  const all = documents.flatMap(({ service, doc }) => {
    const target: SampleTarget = { baseUrl: `${ORIGIN}${doc.servers![0]!.url!}`, origin: ORIGIN, service: service.name };
    return operationsOf(doc).map((entry) => ({ service, doc, target, entry, samples: operationSamples(doc, target, entry) }));
  });

  test('each document has operations, and each operation both samples', () => {
    expect(documents.map(({ service }) => service.name)).toEqual(['events', 'warehouse', 'pipelines', 'admin']);
    for (const { service } of documents) expect(all.filter((s) => s.service.name === service.name).length).toBeGreaterThan(5);
    for (const { service, entry, samples } of all) {
      const name = `${service.name} ${entry.method} ${entry.path}`;
      expect({ name, curl: samples.curl.startsWith('curl '), client: samples.client.includes('@platform/client') }).toEqual({ name, curl: true, client: true });
    }
  });

  test("the curl sample's method and URL are the operation's: the gateway origin, the API's prefix and the path with its ids filled in", () => {
    for (const { service, entry, samples } of all) {
      const [, method = 'GET', url] = /^curl (?:-X (\w+) )?'([^']+)'/.exec(samples.curl) ?? [];
      const parsed = new URL(url!);
      const name = `${service.name} ${entry.method} ${entry.path}`;
      expect({ name, method, origin: parsed.origin }).toEqual({ name, method: entry.method.toUpperCase(), origin: ORIGIN });
      expect({ name, path: parsed.pathname }).toEqual({ name, path: expect.stringMatching(pathPattern(service.prefix, entry.path)) });
      expect(samples.client).toContain(`.${entry.method.toUpperCase()}('${entry.path}'`);
    }
  });

  test('headers follow the contract: a bearer API key, platform-version and Idempotency-Key for the services; the admin token and neither for admin', () => {
    for (const { service, entry, doc, samples } of all) {
      const name = `${service.name} ${entry.method} ${entry.path}`;
      const takes = (header: string) => (entry.operation.parameters ?? []).some((p) => deref(doc, p).name === header);
      const admin = service.name === 'admin';
      expect({ name, auth: samples.curl.includes(`-H "Authorization: Bearer $${admin ? 'PLATFORM_ADMIN_TOKEN' : 'PLATFORM_API_KEY'}"`) }).toEqual({
        name,
        auth: true,
      });
      expect({ name, version: samples.curl.includes("-H 'platform-version: 2024-12-01'") }).toEqual({ name, version: takes('platform-version') });
      expect({ name, version: takes('platform-version') }).toEqual({ name, version: !admin });
      const writes = entry.method === 'post' || entry.method === 'patch';
      expect({ name, idempotency: samples.curl.includes('Idempotency-Key') }).toEqual({ name, idempotency: writes && !admin });
      expect({ name, factory: samples.client.includes(admin ? 'createAdminClient({' : 'createClient({') }).toEqual({ name, factory: true });
    }
  });

  test('a body goes with every operation whose body is required, holding every required field of its schema', () => {
    for (const { service, entry, doc, target } of all) {
      const request = sampleRequest(doc, target, entry);
      const body = deref(doc, entry.operation.requestBody);
      const name = `${service.name} ${entry.method} ${entry.path}`;
      if (body.required) expect({ name, body: request.body !== undefined }).toEqual({ name, body: true });
      const schema = deref(doc, body.content?.['application/json']?.schema);
      if (request.body !== undefined && schema.required) {
        expect({ name, fields: schema.required.filter((field) => !(field in (request.body as object))) }).toEqual({ name, fields: [] });
      }
    }
  });

  test('every client sample compiles against @platform/client: the paths, parameters and bodies its types accept', () => {
    // Virtual files beside this folder, so `@platform/client` resolves as from any module of the gateway.
    const dir = `${ts.sys.getCurrentDirectory()}/docs/src/__samples__`;
    const files = new Map<string, string>([[`${dir}/globals.d.ts`, 'declare const process: { env: Record<string, string | undefined> };\n']]);
    all.forEach(({ samples }, index) => files.set(`${dir}/sample-${index}.ts`, `${samples.client}\nexport {};\n`));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ES2022,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version, ...rest) =>
      files.has(name) ? ts.createSourceFile(name, files.get(name)!, version) : getSourceFile(name, version, ...rest);
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => files.has(name) || fileExists(name);
    const readFile = host.readFile.bind(host);
    host.readFile = (name) => files.get(name) ?? readFile(name);
    const program = ts.createProgram([...files.keys()], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${d.file.fileName.replace(`${dir}/`, '')}: ` : '';
      const sample = d.file && /sample-(\d+)/.exec(d.file.fileName);
      const operation = sample ? all[Number(sample[1])]! : undefined;
      return `${where}${operation ? `${operation.service.name} ${operation.entry.method} ${operation.entry.path}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
    // The check has teeth: a path the client does not know is an error.
    const wrong = `${dir}/wrong.ts`;
    files.set(wrong, `${all[0]!.samples.client.replace(`'${all[0]!.entry.path}'`, "'/no-such-path'")}\nexport {};\n`);
    expect(ts.getPreEmitDiagnostics(ts.createProgram([wrong, `${dir}/globals.d.ts`], options, host)).length).toBeGreaterThan(0);
  }, 120_000);
});
