import { validate } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;
interface MediaType {
  schema?: Json;
  example?: unknown;
}

/** Fails with every problem when `document` is not a valid OpenAPI 3.1 document (the official schema plus reference checks). */
export async function expectValidOpenApi(document: object): Promise<void> {
  // The parser dereferences in place: it gets a copy.
  const result = await validate(structuredClone(document) as never);
  if (!result.valid) throw new Error(`invalid OpenAPI document:\n${result.errors.map((error) => `- ${error.message}`).join('\n')}`);
}

/**
 * JSON Schema 2020-12 validation (the dialect of OpenAPI 3.1) of bodies against what an OpenAPI
 * document says: answers of an operation, and every example the document gives.
 */
export function openApiValidator(document: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const components = document.components;

  function check(schema: Json, value: unknown, where: string): string[] {
    const key = JSON.stringify(schema);
    let validateFn = compiled.get(key);
    if (!validateFn) {
      // `#/components/...` references resolve inside this root.
      validateFn = ajv.compile({ ...schema, components });
      compiled.set(key, validateFn);
    }
    if (validateFn(value)) return [];
    return (validateFn.errors ?? []).map((error) => `${where}: ${error.instancePath || '(body)'} ${error.message} ${JSON.stringify(error.params)}`);
  }

  function operation(method: string, path: string): Json {
    const found = (document.paths as Record<string, Record<string, Json>> | undefined)?.[path]?.[method.toLowerCase()];
    if (!found) throw new Error(`${method} ${path} is not in the document`);
    return found;
  }

  return {
    /** Problems of `body` as the `status` answer of `METHOD /path` (OpenAPI form, `/tickets/{id}`); empty when it matches. */
    responseProblems(method: string, path: string, status: number, body: unknown): string[] {
      const responses = operation(method, path).responses as Record<string, { content?: Record<string, MediaType> }> | undefined;
      const response = responses?.[String(status)];
      if (!response) return [`${method} ${path} documents no ${status} answer`];
      const schema = response.content?.['application/json']?.schema;
      if (!schema)
        return body === undefined || body === '' || (typeof body === 'object' && body !== null && Object.keys(body).length === 0)
          ? []
          : [`${method} ${path} ${status} documents no body`];
      return check(schema, body, `${method} ${path} ${status}`);
    },

    /** Problems of `body` as the request body of `METHOD /path`. */
    requestProblems(method: string, path: string, body: unknown): string[] {
      const schema = (operation(method, path).requestBody as { content?: Record<string, MediaType> } | undefined)?.content?.['application/json']?.schema;
      if (!schema) return [`${method} ${path} documents no request body`];
      return check(schema, body, `${method} ${path} request`);
    },

    /** Problems of `body` as the webhook event `type` that the document says the service sends. */
    webhookProblems(type: string, body: unknown): string[] {
      const post = (document.webhooks as Record<string, Record<string, Json>> | undefined)?.[type]?.post;
      const schema = (post?.requestBody as { content?: Record<string, MediaType> } | undefined)?.content?.['application/json']?.schema;
      if (!schema) return [`the document has no webhook ${type}`];
      return check(schema, body, `webhook ${type}`);
    },

    /** Problems of every example in the document (request bodies, answers, webhook events) against its own schema. */
    exampleProblems(): string[] {
      const problems: string[] = [];
      const visit = (value: unknown, where: string): void => {
        if (Array.isArray(value)) return value.forEach((item, i) => visit(item, `${where}/${i}`));
        if (value === null || typeof value !== 'object') return;
        const media = (value as Json)['application/json'] as MediaType | undefined;
        if (media?.schema && media.example !== undefined) problems.push(...check(media.schema, media.example, `${where} example`));
        for (const [key, inner] of Object.entries(value)) visit(inner, `${where}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      };
      visit({ paths: document.paths, webhooks: document.webhooks }, '#');
      for (const [name, schema] of Object.entries(((components as Json | undefined)?.schemas ?? {}) as Record<string, Json>)) {
        for (const [i, example] of ((schema.examples as unknown[] | undefined) ?? []).entries())
          problems.push(...check(schema, example, `#/components/schemas/${name} examples/${i}`));
      }
      return problems;
    },
  };
}
export type OpenApiValidator = ReturnType<typeof openApiValidator>;
