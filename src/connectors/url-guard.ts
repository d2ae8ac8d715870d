/**
 * Webhook target checks (decision D9.4): `http(s)` only, and no target that resolves to a loopback, private,
 * link-local, carrier-grade NAT, unspecified, multicast, broadcast, reserved or cloud-metadata address, also when
 * written as IPv4-mapped or IPv4-compatible IPv6 — unless the operator sets `WEBHOOK_ALLOW_PRIVATE=true`.
 *
 * Checked when a subscription is saved and again at every connection (`guardedLookup`): the delivery connects
 * only to an address that passed the check, so a DNS answer that changes between the check and the connection
 * (DNS rebinding) cannot reach an internal host.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

const lookupAll = promisify(dnsLookup);

/** Why a target was refused; `reason` is safe to show to the integrator. */
export class UnsafeTargetError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * The class of an IP address: `unicast` for a public address, otherwise the ipaddr.js range name
 * (`loopback`, `private`, `linkLocal`, `carrierGradeNat`, `uniqueLocal`, `unspecified`, `multicast`, …).
 * IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`) IPv6 are classified as their IPv4 address.
 */
export function addressClass(address: string): string {
  let parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6') {
    const parts = (parsed as ipaddr.IPv6).parts;
    // ::a.b.c.d (deprecated IPv4-compatible form): the host behind it is the embedded IPv4 address.
    if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || (parts[7] ?? 0) > 1)) {
      const bytes = (parsed as ipaddr.IPv6).toByteArray().slice(12);
      parsed = ipaddr.fromByteArray(bytes);
    }
  }
  return parsed.range();
}

/**
 * Refuses an address that is not public unicast (metadata addresses 169.254.169.254 and fd00:ec2::254 fall in
 * the link-local and unique-local classes).
 * @throws UnsafeTargetError naming the address class
 */
export function assertPublicAddress(address: string): void {
  const range = addressClass(address);
  if (range !== 'unicast')
    throw new UnsafeTargetError(`address ${address} is ${range}, not a public address`);
}

/**
 * Parses and checks a webhook URL at save time: scheme, then every address its host resolves to.
 * @param allowPrivate `config.webhookAllowPrivate`: skip the address checks
 * @throws UnsafeTargetError with the reason (the caller maps it to `error_validation` on `url`)
 */
export async function assertSafeWebhookUrl(text: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UnsafeTargetError('not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UnsafeTargetError('only http and https URLs are allowed');
  }
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    assertPublicAddress(host);
    return url;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host, { all: true, verbatim: true });
  } catch {
    throw new UnsafeTargetError(`host ${host} does not resolve`);
  }
  for (const { address } of addresses) assertPublicAddress(address);
  return url;
}

/**
 * A `lookup` for `http.request`/`net.connect` that resolves the host, refuses it when any address is not
 * public, and hands the socket only the vetted address (closes the DNS-rebinding gap, D9.4).
 * IP-literal hosts never reach a lookup: check them with `assertPublicAddress` before connecting.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    try {
      for (const { address } of addresses) assertPublicAddress(address);
    } catch (refusal) {
      return callback(refusal as NodeJS.ErrnoException, '', 0);
    }
    const wanted = options.family === 6 ? 6 : options.family === 4 ? 4 : 0;
    const chosen = addresses.find((entry) => wanted === 0 || entry.family === wanted) ?? addresses[0];
    if (!chosen) return callback(new Error(`host ${hostname} has no address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [chosen]);
    callback(null, chosen.address, chosen.family);
  });
};
