import type { components, paths } from './openapi.gen';

/*
 * The CLI's view of the HTTP API, derived from the generated description of the OpenAPI document
 * (openapi.gen.ts, `npm run openapi`): a URL built by `url()` carries its route, and the client's `get` and
 * `post` take the route's request body and answer its response body. A change of the API that breaks a
 * call of the CLI fails the type-check.
 */

export type Schemas = components['schemas'];
export type ApiPath = keyof paths & string;

type Split<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Split<Tail>] : [S];

/** Segment by segment: a `{param}` of the document matches any one segment of the URL, a literal only itself. */
type SegmentsMatch<R extends readonly string[], P extends readonly string[]> = R extends [infer RH extends string, ...infer RT extends string[]]
  ? P extends [infer PH extends string, ...infer PT extends string[]]
    ? PH extends `{${string}}`
      ? SegmentsMatch<RT, PT>
      : RH extends PH
        ? SegmentsMatch<RT, PT>
        : false
    : false
  : P extends []
    ? true
    : false;

/** The documented path of a concrete route (`/v1/gate/${string}/override` -> `/v1/gate/{id}/override`). */
export type PathOf<R extends string> = { [P in ApiPath]: SegmentsMatch<Split<R>, Split<P>> extends true ? P : never }[ApiPath];

declare const ROUTE: unique symbol;

/** A URL of the API that remembers its route (at the type level only: at run time it is the string). */
export type ApiUrl<R extends string = string> = string & { readonly [ROUTE]: R };

/** Any other URL (a test double's, a CSV download's): untyped, and never an ApiUrl, so a typed call cannot fall back to it. */
export type PlainUrl = string & { readonly [ROUTE]?: never };

type RouteOf<U> = U extends { readonly [ROUTE]: infer R extends string } ? R : never;
type OperationOf<U, M extends string> = paths[PathOf<RouteOf<U>>] extends infer Item ? (Item extends Record<M, infer O> ? O : never) : never;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;

/** The JSON answer of a successful call (200 or 201; a 202 is a pending answer, read again later). */
export type AnswerOf<U, M extends string> = [OperationOf<U, M>] extends [never] ? unknown : OperationOf<U, M> extends { responses: infer Rs } ? JsonOf<Rs[Extract<keyof Rs, 200 | 201>]> : unknown;

/** The JSON request body of the route. */
export type BodyOf<U, M extends string> = [OperationOf<U, M>] extends [never] ? unknown : OperationOf<U, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : unknown;
