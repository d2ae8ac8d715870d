/**
 * Names and search texts as the client writes them (decision P220): both are read without the white space and the
 * invisible format characters (`\p{Cf}`: zero-width space and joiners, the byte order mark, direction marks) at
 * either end, a name must show at least one other character, and a blank search text filters nothing.
 */

const INVISIBLE_EDGES = /^[\s\p{Cf}]+|[\s\p{Cf}]+$/gu;

/** JSON Schema `pattern` of a name that shows a character (Ajv compiles patterns with the `u` flag). */
export const VISIBLE_TEXT = '[^\\s\\p{Cf}]';

/** `text` without white space and invisible format characters at either end. */
export const trimText = (text: string): string => text.replace(INVISIBLE_EDGES, '');

/**
 * `text` trimmed (`trimText`), or undefined when it is absent or nothing visible remains: a name that is missing,
 * or a search text that filters nothing.
 */
export function visibleText(text: string | null | undefined): string | undefined {
  const trimmed = text == null ? '' : trimText(text);
  return trimmed === '' ? undefined : trimmed;
}
