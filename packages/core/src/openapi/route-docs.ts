/**
 * What a route says about itself in the API reference (`docs` beside its schemas); the OpenAPI
 * document (document.ts) reads it. Types only, so the route builder can name them.
 */
import type { z } from 'zod';
import type { ErrorBody } from '../http/errors';
import type { EventType } from '../data/outbox';

/** One success answer of a route. */
export interface ResponseDoc {
  description: string;
  /** The body as the handler renders it (an output schema); none for an empty answer (204). */
  schema?: z.ZodType;
  /** Default: the first of the schema's `examples`. */
  example?: unknown;
  /** Headers this answer sets besides the platform's own (`ETag`, `Location`). */
  headers?: Record<string, { description: string; schema?: z.ZodType }>;
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 429 | 500 | 503;

/** What an error status means for one route, with an example of its `error` (without `request_id`). */
export interface ErrorDoc {
  description: string;
  example?: Omit<ErrorBody['error'], 'request_id'>;
}

/** A route's entry in the API reference; its schemas come from the route itself. */
export interface RouteDocs {
  /** Stable and unique in the service: SDK generators name methods after it. */
  operationId: string;
  summary: string;
  /** Markdown. */
  description?: string;
  /** The group in the reference; default: the path's first segment. */
  tag?: string;
  /** Success answers by status. */
  responses: Record<number, ResponseDoc>;
  /**
   * What error statuses mean for this route. The platform's own are always documented: 400, 401,
   * 403, 408, 429, 500 and 503 on every route, 404 with a path id, 409, 413 and 415 on POST and PATCH.
   */
  errors?: Partial<Record<ErrorStatus, string | ErrorDoc>>;
  /** The body as documented, when the handler parses it itself beyond the route's outline schema. */
  body?: z.ZodType;
  requestExample?: unknown;
}

/** A webhook event a service sends: `data` is the resource as the API returns it. */
export interface WebhookDoc {
  summary: string;
  data: z.ZodType;
}

/** A webhook event's entry, keyed by its type. */
export type WebhookDocs = Partial<Record<EventType, WebhookDoc>>;
