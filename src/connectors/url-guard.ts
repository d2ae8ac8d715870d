/**
 * Target checks of outbound HTTP (decision D9.4, P165): `http(s)` only, and for webhooks no target that resolves
 * to a loopback, private, link-local, carrier-grade NAT, unspecified, multicast, broadcast, reserved or
 * cloud-metadata address, also when written as IPv4-mapped or IPv4-compatible IPv6 — unless the operator sets
 * `WEBHOOK_ALLOW_PRIVATE=true`.
 *
 * Where private addresses are allowed (provider base URLs set by the operator, webhooks with
 * `WEBHOOK_ALLOW_PRIVATE`), link-local addresses (169.254.0.0/16, fe80::/10), the other cloud metadata addresses
 * (`METADATA_ADDRESSES`) and the metadata host names (`METADATA_HOSTS`) are still refused: nothing the service
 * is configured to call lives there, and a metadata service hands out the machine's cloud credentials.
 *
 * Checked when a URL is saved and again at every connection (`guardedLookup`, `metadataGuardedLookup`): the
 * request connects only to an address that passed the check, so a DNS answer that changes between the check and
 * the connection (DNS rebinding) cannot reach an internal host.
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
  return hostAddress(address).range();
}

/** `address` parsed; IPv4-mapped and IPv4-compatible IPv6 become the IPv4 address they carry. */
function hostAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6') {
    const parts = (parsed as ipaddr.IPv6).parts;
    // ::a.b.c.d (deprecated IPv4-compatible form): the host behind it is the embedded IPv4 address.
    if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || (parts[7] ?? 0) > 1)) {
      const bytes = (parsed as ipaddr.IPv6).toByteArray().slice(12);
      return ipaddr.fromByteArray(bytes);
    }
  }
  return parsed;
}

/**
 * Cloud metadata services outside the link-local ranges: AWS over IPv6 (`fd00:ec2::254`), Alibaba Cloud
 * (`100.100.100.200`) and Oracle Cloud's former address (`192.0.0.192`). The common one, 169.254.169.254 (AWS,
 * Google Cloud, Azure, Oracle, DigitalOcean, OpenStack), is link-local.
 */
export const METADATA_ADDRESSES: readonly string[] = ['fd00:ec2::254', '100.100.100.200', '192.0.0.192'];

/** Host names of cloud metadata services (Google Cloud's and AWS's), refused whatever they resolve to. */
export const METADATA_HOSTS: readonly string[] = [
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
];

const metadataAddresses = new Set(
  METADATA_ADDRESSES.map((address) => ipaddr.parse(address).toNormalizedString()),
);

/**
 * Refuses a link-local address (169.254.0.0/16, fe80::/10, also IPv4-mapped) or a cloud metadata address; every
 * other address passes (private networks included).
 * @throws UnsafeTargetError naming the address
 */
export function assertNotMetadataAddress(address: string): void {
  const parsed = hostAddress(address);
  if (parsed.range() === 'linkLocal')
    throw new UnsafeTargetError(`address ${address} is link-local (cloud metadata range)`);
  if (metadataAddresses.has(parsed.toNormalizedString()))
    throw new UnsafeTargetError(`address ${address} is a cloud metadata address`);
}

/**
 * Refuses a URL whose host is a metadata host name, a link-local or a metadata address (no DNS lookup: names are
 * checked on connection by `metadataGuardedLookup`).
 * @throws UnsafeTargetError with the reason
 */
function assertNotMetadataHost(url: URL): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return assertNotMetadataAddress(host);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (METADATA_HOSTS.includes(name)) throw new UnsafeTargetError(`host ${name} is a cloud metadata service`);
}

/**
 * Parses `text` as an absolute `http(s)` URL.
 * @throws UnsafeTargetError when it is not one
 */
function httpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UnsafeTargetError('not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnsafeTargetError('only http and https URLs are allowed');
  return url;
}

/**
 * Checks the base URL of a provider (marketplace, cash register) as the operator saves it: an absolute `http` or
 * `https` URL whose host is not a cloud metadata name, link-local or metadata address. Private addresses are
 * allowed (a self-hosted operator's own network, the sandboxes).
 * @throws UnsafeTargetError with the reason (the caller maps it to `error_validation` on its field)
 */
export function assertProviderUrl(text: string): URL {
  const url = httpUrl(text);
  assertNotMetadataHost(url);
  return url;
}

/**
 * Checks a URL just before a connection to it: scheme, then the host: a public address unless `allowPrivate`,
 * and never a metadata name, link-local or metadata address. Host names are checked again on the addresses they
 * resolve to, by the lookup (`guardedLookup` or `metadataGuardedLookup`).
 * @throws UnsafeTargetError with the reason
 */
export function assertConnectableUrl(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnsafeTargetError('only http and https URLs are allowed');
  assertNotMetadataHost(url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host)) assertPublicAddress(host);
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
 * @param allowPrivate `config.webhookAllowPrivate`: allow every address but link-local and metadata ones
 * @throws UnsafeTargetError with the reason (the caller maps it to `error_validation` on `url`)
 */
export async function assertSafeWebhookUrl(text: string, allowPrivate: boolean): Promise<URL> {
  const url = httpUrl(text);
  assertNotMetadataHost(url);
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
 * A `lookup` for `http.request`/`net.connect` that resolves the host, refuses it when `check` throws for any of
 * its addresses, and hands the socket only a vetted address (closes the DNS-rebinding gap, D9.4).
 * IP-literal hosts never reach a lookup: check them before connecting (`assertConnectableUrl`).
 */
function lookupGuardedBy(check: (address: string) => void): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      try {
        for (const { address } of addresses) check(address);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 0);
      }
      const wanted = options.family === 6 ? 6 : options.family === 4 ? 4 : 0;
      const vetted = addresses.filter((entry) => wanted === 0 || entry.family === wanted);
      const chosen = vetted[0] ?? addresses[0];
      if (!chosen) return callback(new Error(`host ${hostname} has no address`), '', 0);
      // Every address was checked: a caller trying them in turn (autoSelectFamily) gets them all.
      if (options.all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(
          null,
          vetted.length > 0 ? vetted : [chosen],
        );
      callback(null, chosen.address, chosen.family);
    });
  };
}

/** The lookup of public targets: every address the host resolves to must be public (D9.4). */
export const guardedLookup: LookupFunction = lookupGuardedBy(assertPublicAddress);

/** The lookup where private targets are allowed: no address may be link-local or a metadata address (P165). */
export const metadataGuardedLookup: LookupFunction = lookupGuardedBy(assertNotMetadataAddress);
