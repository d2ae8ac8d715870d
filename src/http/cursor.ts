/**
 * Opaque cursors of keyset pagination (P172): a list answers `nextCursor` after its last row and takes it back
 * as `cursor`, beside `page` (D4.1 stays valid). A cursor carries the list, the client, the sort (`sortBy`,
 * `ascending`), the last row's sort value and id, and the number of the page it opens; it is signed with a key
 * derived from the operator key (HMAC-SHA-256, truncated to 128 bits), so every process sharing the operator
 * key accepts it and a changed cursor is refused.
 *
 * Form: base64url(JSON array) `.` base64url(tag). The sort value is the column's PostgreSQL text form (exact:
 * timestamps keep their microseconds, decimals their digits) or null.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type, type TObjectOptions, type TSchema } from 'typebox';
import { validationError } from './errors.ts';

/**
 * The cursor format's version: 2 since name sorts ignore case (P222), which changed what a name cursor's value
 * means. A cursor of another version is refused, so a walk across an upgrade starts again instead of skipping rows.
 */
const VERSION = 2;
const TAG_BYTES = 16;
/** Longest cursor accepted (a sort value is a stored column: a name, a date, a number). */
export const MAX_CURSOR_LENGTH = 2_000;

/** What a cursor is valid for: one list of one client in one order. */
export interface CursorScope {
  /** The list's name, e.g. `inbound.find`. */
  list: string;
  clientId: number;
  /** The sort field as the request names it (`ID` when the list sorts by id only). */
  sortBy: string;
  ascending: boolean;
}

/** Where the next page starts: after the row with this sort value and id. */
export interface CursorPosition {
  /** The last row's sort value as PostgreSQL text, null for a null value or a sort by id alone. */
  value: string | null;
  id: number;
  /** The number of the page the cursor opens (answered as `page`). */
  page: number;
}

/** The `cursor` query parameter of the lists with keyset pagination. */
export const CursorQuery = {
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      description:
        'The `nextCursor` of the previous page: the page after its last row, stable while rows are added or ' +
        'removed (keyset pagination). Send the same filter and sort; `page` is then taken from the cursor',
    }),
  ),
};

/** `nextCursor` of a list answer: absent on the last page. */
export const NextCursor = Type.Optional(
  Type.String({ description: 'Pass as `cursor` to read the next page; absent on the last page' }),
);

/** A page of rows (D4.2) of a list with keyset pagination: `total` only when `count=true`, `nextCursor`. */
export type KeysetPageOf<T> = { rows: T[]; page: number; total?: number; nextCursor?: string };

/** The schema of `KeysetPageOf` rows of `row`. */
export const KeysetPage = <T extends TSchema>(row: T, options: TObjectOptions = {}) =>
  Type.Object(
    {
      rows: Type.Array(row),
      page: Type.Integer(),
      total: Type.Optional(Type.Integer()),
      nextCursor: NextCursor,
    },
    options,
  );

type Payload = [number, string, number, string, boolean, string | null, number, number];

/** Signs and checks cursors with one key. */
export class CursorCodec {
  /** @param key the HMAC key (32 bytes derived from the operator key) */
  constructor(private readonly key: Buffer) {}

  /** The cursor of `position` in `scope`. */
  encode(scope: CursorScope, position: CursorPosition): string {
    const payload: Payload = [
      VERSION,
      scope.list,
      scope.clientId,
      scope.sortBy,
      scope.ascending,
      position.value,
      position.id,
      position.page,
    ];
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.tag(body).toString('base64url')}`;
  }

  /**
   * The position of a cursor given as `cursor` for `scope`.
   * @throws 400 `error_validation` `{field: 'cursor'}` for a cursor that is malformed or changed, of another
   *   release's format, of another list or client, or of another sort
   */
  decode(cursor: string, scope: CursorScope): CursorPosition {
    const [body, tag, extra] = cursor.split('.');
    const given = tag === undefined ? undefined : Buffer.from(tag, 'base64url');
    if (
      extra !== undefined ||
      body === undefined ||
      given === undefined ||
      given.length !== TAG_BYTES ||
      !timingSafeEqual(given, this.tag(body))
    )
      throw validationError('cursor', 'is not a cursor this service issued, or it was changed');
    const [version, list, clientId, sortBy, ascending, value, id, page] = JSON.parse(
      Buffer.from(body, 'base64url').toString('utf8'),
    ) as Payload;
    if (version !== VERSION)
      throw validationError('cursor', 'was issued by another release of the service; read again from page 1');
    if (list !== scope.list || clientId !== scope.clientId)
      throw validationError('cursor', 'belongs to another list or another client');
    if (sortBy !== scope.sortBy || ascending !== scope.ascending)
      throw validationError('cursor', 'was issued for another sortBy or ascending');
    return { value, id, page };
  }

  private tag(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, TAG_BYTES);
  }
}

/**
 * The paging of a list request: `page` (offset paging, D4.1) or `cursor` (keyset pagination). `page` defaults
 * to 1 in validation, so with a cursor only another page number is a conflict.
 * @throws 400 `error_validation` for `cursor` together with a `page` other than 1, or a cursor `decode` refuses
 */
export function resolvePaging(
  codec: CursorCodec,
  query: { page?: number; cursor?: string },
  scope: CursorScope,
): { page: number; after?: CursorPosition } {
  if (query.cursor === undefined) return { page: query.page ?? 1 };
  if (query.page !== undefined && query.page !== 1)
    throw validationError('page', 'cannot be sent together with cursor');
  const after = codec.decode(query.cursor, scope);
  return { page: after.page, after };
}

/**
 * Rows of a page read with `limit + 1` rows: the page's rows, and the cursor after its last row when the extra
 * row shows there is more.
 * @param positionOf the sort value and id of a row
 */
export function cutPage<T>(
  codec: CursorCodec,
  scope: CursorScope,
  rows: T[],
  limit: number,
  page: number,
  positionOf: (row: T) => { value: string | null; id: number },
): { rows: T[]; nextCursor?: string } {
  if (rows.length <= limit) return { rows };
  const kept = rows.slice(0, limit);
  const last = positionOf(kept[limit - 1] as T);
  return { rows: kept, nextCursor: codec.encode(scope, { ...last, page: page + 1 }) };
}
