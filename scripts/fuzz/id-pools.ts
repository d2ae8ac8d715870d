/**
 * Real ids for the fuzzer (P142): requests reach deep code paths only when the ids they name exist, so ids are
 * harvested from every successful answer and drawn back into path parameters, query parameters and body
 * fields. Pools are keyed by lower-case names: the `title` of the schema an object with an `id` was read under
 * (`ProductModel` → `productmodel`), the resource of an operation without path parameters for the entities it
 * answers (`POST /api/inbound/` → `inbound`), and the name of every `<name>Id` field (`organizationId` →
 * `organization`).
 *
 * A field asks for an id by its name: `orderId` draws from the pool `order`, `id` from the pool of its parent
 * property or from those of its path's segments; a pool matches exactly or by its end (`tagId` → `producttag`),
 * so groups added later are served without changing this code. An id a parameter named and the service
 * answered 404 for is dropped (`forget`): entities deleted by the fuzz itself stop being drawn.
 */
import { followReference, type OpenApiDocument } from './openapi.ts';

/** Whether a field or parameter name names an id (`id`, `ids`, `orderId`, `productIds`). */
export const isIdName = (name: string) => /^ids?$/i.test(name) || /[a-z0-9](Id|Ids)$/.test(name);

/** `views` → `view`, `deliveries` → `delivery` (pool names are singular). */
const singular = (word: string) => word.toLowerCase().replace(/ies$/, 'y').replace(/s$/, '');

/**
 * The pool names an id field draws from: the `<name>` of `<name>Id(s)`; for a bare `id` its parent property
 * (`views.0.id` → `view`), or at the top of a body or among the parameters the static segments of the path
 * (`PUT /api/tag` → `tag`).
 */
export function stemsOf(name: string, parentKey: string | undefined, pathStems: readonly string[]): string[] {
  const prefix = /^(.*?[a-z0-9])Ids?$/.exec(name)?.[1];
  if (prefix !== undefined) return [prefix.toLowerCase()];
  return parentKey === undefined ? [...pathStems] : [singular(parentKey)];
}

/** The static segments of a templated path in the singular, without `api` (`/api/tag/find/{modelId}` → tag, find). */
export const pathStemsOf = (path: string) =>
  path
    .split('/')
    .filter((segment) => segment !== '' && segment !== 'api' && !segment.startsWith('{'))
    .map(singular);

const isId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** Ids seen so far, by pool name. */
export class IdPools {
  private readonly pools = new Map<string, Set<number>>();

  /** Adds `id` (a positive safe integer; anything else is ignored) to the pool `name`. */
  add(name: string, id: unknown): void {
    if (!isId(id)) return;
    const key = name.toLowerCase();
    let pool = this.pools.get(key);
    if (!pool) this.pools.set(key, (pool = new Set()));
    pool.add(id);
  }

  /**
   * An id for a field whose pool names are `stems` (see `stemsOf`): drawn with `draw` in [0, 1) among the ids
   * of every pool named like a stem, or, for a stem with no such pool, of every pool whose name ends with it.
   * @returns undefined when no pool matches
   */
  pick(stems: readonly string[], draw: number): number | undefined {
    const ids = stems.flatMap((stem) => {
      const exact = this.pools.get(stem);
      if (exact && exact.size > 0) return [...exact];
      return [...this.pools.entries()].filter(([key]) => key.endsWith(stem)).flatMap(([, pool]) => [...pool]);
    });
    return ids.length === 0 ? undefined : ids[Math.floor(draw * ids.length)];
  }

  /**
   * Drops `id` from the pools `stems` draw from (see `pick`): the service answered that it does not exist (it was
   * deleted by an earlier request), so later requests draw live ids.
   */
  forget(stems: readonly string[], id: number): void {
    for (const stem of stems)
      for (const [key, pool] of this.pools) if (key === stem || key.endsWith(stem)) pool.delete(id);
  }

  /** Pool names and sizes, for the report. */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.pools.entries()].map(([key, pool]) => [key, pool.size]));
  }

  /**
   * Records the ids of a successful answer `value` read under `schema` (a response schema of `document`) to
   * a request of `path`: see the module comment.
   */
  harvest(value: unknown, schema: unknown, document: OpenApiDocument, path: string): void {
    // Below a path parameter the answer is another resource (`/api/webhook/{webhookId}/deliveries`).
    const resource = path.includes('{') ? undefined : pathStemsOf(path).at(0);
    this.walk(value, schema, document, resource, true);
  }

  /** `asResource`: the value is the answer itself, a row of its page or an item of its list. */
  private walk(
    value: unknown,
    schema: unknown,
    document: OpenApiDocument,
    resource: string | undefined,
    asResource: boolean,
  ) {
    const node = followReference(schema, document);
    for (const part of ['allOf', 'anyOf', 'oneOf'] as const) {
      const alternatives = node[part];
      if (Array.isArray(alternatives))
        for (const alternative of alternatives) this.walk(value, alternative, document, resource, asResource);
    }
    if (Array.isArray(value)) {
      for (const item of value) this.walk(item, node.items, document, resource, asResource);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const entity = value as Record<string, unknown>;
    if (typeof node.title === 'string') this.add(node.title, entity.id);
    if (asResource && resource !== undefined) this.add(resource, entity.id);
    const properties = (node.properties ?? {}) as Record<string, unknown>;
    for (const [key, item] of Object.entries(entity)) {
      const stem = /^(.*?[a-z0-9])Id$/.exec(key)?.[1];
      if (stem !== undefined) this.add(stem, item);
      if (typeof item === 'object' && item !== null)
        this.walk(item, properties[key], document, resource, asResource && key === 'rows');
    }
  }
}
