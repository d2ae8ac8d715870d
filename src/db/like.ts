/**
 * LIKE patterns of the text filters (every list's `query`, inbound find's `containsArticle` and `product`, D5.10):
 * the caller's text is matched literally, so its `%`, `_` and `\` are escaped (PostgreSQL's default escape
 * character is `\`).
 */

/** `text` with `%`, `_` and `\` escaped, to be placed inside a LIKE pattern. */
const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (match) => `\\${match}`);

/** The LIKE pattern matching values that contain `text` anywhere (`%text%`, wildcards of `text` escaped). */
export const likeContains = (text: string): string => `%${escapeLike(text)}%`;
