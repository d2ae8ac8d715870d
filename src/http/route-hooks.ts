/**
 * Hooks added to single routes from an `onRoute` hook (compression, idempotency keys): a route option takes one
 * hook, a list of them, or none.
 */

/** A route option's hooks as a list. */
export function hooksOf<Hook>(hooks: Hook | Hook[] | undefined): Hook[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
