/**
 * A password in a subscription's URL (`https://user:password@host/…`) is the receiver's credential (P221): it is
 * stored sealed apart from the URL (P160), shown as `***`, and put back into the URL only for a delivery, which
 * sends it as `Authorization: Basic`. Passwords are kept percent-encoded, as the URL holds them.
 */

/** A URL without its password, and the password (percent-encoded), or null when it has none. */
export function splitUrlPassword(url: string): { url: string; password: string | null } {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed?.password) return { url, password: null };
  const password = parsed.password;
  parsed.password = '';
  return { url: parsed.href, password };
}

/** `url` with `password` (percent-encoded) in it; `url` itself when `password` is null. */
export function withUrlPassword(url: string, password: string | null): string {
  if (password === null) return url;
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.href;
}

/**
 * The URL as answers show it: a password, sealed apart (`sealed`) or still in the URL (a row the previous release
 * wrote), reads `***`.
 */
export function shownUrl(url: string, sealed: boolean): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || (!sealed && !parsed.password)) return url;
  parsed.password = '***';
  return parsed.href;
}
