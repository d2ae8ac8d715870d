/**
 * Conditional requests on entities with a `versionId` (RFC 9110 §8.8.3, §13; P133–P135).
 *
 * - An entity tag names the entity kind, id and version, plus the variant of the representation when query
 *   parameters change it: `"order-12-v3"`, `"order-12-v3-limit100-page2"`, `"model-5-v2-params"`. It is
 *   strong: the same tag means the same bytes. A compressed answer appends its coding (`"order-12-v3-gzip"`,
 *   see `compression.ts`): another representation, another tag; comparisons here ignore that suffix.
 * - `GET` with `If-None-Match` naming the current tag (weak comparison, `*` for any) → 304 without a body,
 *   carrying the tag the client sent. A malformed `If-None-Match` is ignored (a full answer is always correct).
 * - `PATCH`/`PUT` with `If-Match` → the version the change must apply to, the alternative to `versionId` in the
 *   body; a stale one is 409 `error_version_conflict` like a stale `versionId` (D5.2, D11.1). Malformed, several
 *   versions, or a `versionId` that differs → 400 `error_validation` `{field: 'If-Match'}`.
 * - `Cache-Control: no-cache` or `max-age=0` (RFC 9111 §5.2.1), or `Pragma: no-cache` (§5.4), asks a cached
 *   answer to be revalidated against the database first (P198).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { validationError } from './errors.ts';

/** Content codings a compressed answer appends to its tag (`compression.ts`). */
export const TAG_CODINGS = ['br', 'gzip'] as const;

/** The version no entity has: an `If-Match` that can never match compares as this stale version. */
export const NO_VERSION = -1;

/**
 * The strong entity tag of `kind` `id` at `version`, with the representation's `variant` when not the default.
 * @param kind lower-case entity kind (`order`, `model`)
 * @param variant lower-case letters and digits joined by `-`, naming the query parameters that shape the body
 */
export function entityTag(kind: string, id: number, version: number, variant = ''): string {
  return `"${kind}-${id}-v${version}${variant === '' ? '' : `-${variant}`}"`;
}

/** One entity tag of a request header. */
interface ListedTag {
  weak: boolean;
  /** The quoted tag without a content-coding suffix, e.g. `"order-12-v3"`. */
  opaque: string;
}

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text.
const TAG = /^\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/;
const CODING_SUFFIX = new RegExp(`-(?:${TAG_CODINGS.join('|')})"$`);

/**
 * Parses an `If-Match` / `If-None-Match` value: `'*'`, the list of tags (coding suffixes removed), or
 * undefined when it is not a valid list.
 */
function parseTagList(header: string): '*' | ListedTag[] | undefined {
  if (header.trim() === '*') return '*';
  const tags: ListedTag[] = [];
  let rest = header;
  while (rest.trim() !== '') {
    const match = TAG.exec(rest);
    if (!match) return undefined;
    tags.push({ weak: match[1] !== undefined, opaque: (match[2] as string).replace(CODING_SUFFIX, '"') });
    rest = rest.slice(match[0].length);
  }
  return tags.length === 0 ? undefined : tags;
}

/** A header's single value (Node joins repeated `If-*` lines with `, `). */
const headerText = (value: string | string[] | undefined) =>
  Array.isArray(value) ? value.join(', ') : value;

// A request directive that forbids an answer from a cache without revalidation (RFC 9111 §5.2.1.1, §5.2.1.4).
const REVALIDATE_DIRECTIVE = /(?:^|,)\s*(?:no-cache|max-age\s*=\s*"?0+"?)\s*(?:,|$)/i;

/**
 * Whether the request asks for revalidation (`Cache-Control: no-cache` or `max-age=0`, `Pragma: no-cache`):
 * then a cached answer is checked against the stored version before it is served (P198).
 */
export function wantsRevalidation(request: FastifyRequest): boolean {
  const cacheControl = headerText(request.headers['cache-control']);
  if (cacheControl !== undefined) return REVALIDATE_DIRECTIVE.test(cacheControl);
  return REVALIDATE_DIRECTIVE.test(headerText(request.headers.pragma) ?? '');
}

/**
 * Sets `ETag: tag` on `reply` and answers a matching `If-None-Match` (weak comparison, RFC 9110 §13.1.2).
 * @returns true when the request was answered 304 (the caller returns `reply` and sends nothing else)
 */
export function answerNotModified(request: FastifyRequest, reply: FastifyReply, tag: string): boolean {
  reply.header('etag', tag);
  const header = headerText(request.headers['if-none-match']);
  if (header === undefined) return false;
  const tags = parseTagList(header);
  if (tags === undefined) return false;
  if (tags !== '*') {
    const matching = tags.find((listed) => listed.opaque === tag);
    if (!matching) return false;
    // The 304 repeats the tag the client holds (with its coding suffix, if it got a compressed answer).
    const sent = header.match(/"[^"]*"/g)?.find((quoted) => quoted.replace(CODING_SUFFIX, '"') === tag);
    reply.header('etag', sent ?? tag);
  }
  void reply.code(304).send();
  return true;
}

/**
 * The version a change must apply to, from `If-Match` and the body's `versionId` (P134).
 * @param kind the entity kind whose tags apply (`order`, `model`)
 * @param id the entity's id, or undefined to accept a tag of any id of `kind` (the caller checks it)
 * @returns `{versionId, id}`: `versionId` undefined when neither says one (or `If-Match: *`); `id` the tag's
 *   entity id when a tag was given. A tag that cannot match (weak, another kind or id) gives `NO_VERSION`.
 * @throws 400 `error_validation` `{field: 'If-Match'}` for a malformed header, tags of several versions, or a
 *   version that differs from `bodyVersionId`
 */
export function requiredVersion(
  request: FastifyRequest,
  kind: string,
  id: number | undefined,
  bodyVersionId: number | undefined,
): { versionId: number | undefined; id: number | undefined } {
  const header = headerText(request.headers['if-match']);
  if (header === undefined) return { versionId: bodyVersionId, id: undefined };
  const tags = parseTagList(header);
  if (tags === undefined) throw validationError('If-Match', 'must be * or a list of entity tags');
  if (tags === '*') return { versionId: bodyVersionId, id: undefined };
  const pattern = new RegExp(`^"${kind}-(\\d{1,16})-v(\\d{1,16})(?:-[a-z0-9-]+)?"$`);
  const candidates = new Map<string, { id: number; version: number }>();
  for (const tag of tags) {
    // Strong comparison (RFC 9110 §13.1.1): a weak tag never matches.
    const match = tag.weak ? null : pattern.exec(tag.opaque);
    const tagId = match ? Number(match[1]) : undefined;
    if (!match || tagId === undefined || (id !== undefined && tagId !== id)) continue;
    candidates.set(`${tagId}:${match[2]}`, { id: tagId, version: Number(match[2]) });
  }
  if (candidates.size > 1) throw validationError('If-Match', 'names several versions; send one');
  const [candidate] = candidates.values();
  const versionId = candidate?.version ?? NO_VERSION;
  if (bodyVersionId !== undefined && bodyVersionId !== versionId)
    throw validationError('If-Match', 'differs from versionId in the body; send one of them');
  return { versionId, id: candidate?.id };
}
