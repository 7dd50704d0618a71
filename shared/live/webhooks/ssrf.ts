/**
 * Where a webhook may be sent. The URL's host is resolved when the delivery is made (every
 * address it resolves to is checked, and the connection goes to a checked address, so a name
 * cannot resolve to a public address for the check and a private one for the request); loopback,
 * private (RFC 1918, RFC 4193, carrier-grade NAT), link-local (169.254.0.0/16 with the instance
 * metadata address, fe80::/10), multicast, reserved and unspecified addresses are refused.
 * Loopback is let through only when the local runtime allows it.
 */
import { lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export type AddressKind = 'loopback' | 'private' | 'link-local' | 'multicast' | 'unspecified' | 'reserved';

const lists: Array<[AddressKind, BlockList]> = [];
function kind(k: AddressKind, subnets: Array<[string, number, 'ipv4' | 'ipv6']>): void {
  const b = new BlockList();
  for (const [net, prefix, family] of subnets) b.addSubnet(net, prefix, family);
  lists.push([k, b]);
}
kind('unspecified', [
  ['0.0.0.0', 8, 'ipv4'],
  ['::', 128, 'ipv6'],
]);
kind('loopback', [
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);
kind('private', [
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
]);
kind('link-local', [
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
kind('multicast', [
  ['224.0.0.0', 4, 'ipv4'],
  ['ff00::', 8, 'ipv6'],
]);
kind('reserved', [
  ['240.0.0.0', 4, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['64:ff9b::', 96, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
]);

/** What kind of non-public address `address` is, or undefined for a public one. */
export function addressKind(address: string): AddressKind | undefined {
  let a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // An IPv4-mapped IPv6 address is its IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) a = mapped[1]!;
  const family = isIP(a);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [k, list] of lists) if (list.check(a, type)) return k;
  return undefined;
}

/** Why an address may not be a webhook target, or undefined when it may. */
export function refusal(address: string, allowLoopback: boolean): string | undefined {
  const k = addressKind(address);
  if (!k || (k === 'loopback' && allowLoopback)) return undefined;
  return `${address} is a ${k} address`;
}

/** A delivery's target was refused (a failed attempt, never sent). */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/**
 * A `lookup` for `http.request` that resolves every address of the host and refuses the whole
 * name when any of them may not be a target; the connection then goes to the first address.
 */
export function checkedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as Array<{ address: string; family: number }>;
      for (const a of list) {
        const k = addressKind(a.address);
        if (k && !(k === 'loopback' && allowLoopback)) {
          return callback(new TargetRefused(`Refused: ${hostname} resolves to ${a.address}, a ${k} address.`), '', 0);
        }
      }
      const first = list[0];
      if (!first) return callback(new TargetRefused(`Refused: ${hostname} resolves to no address.`), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, first.address, first.family);
    });
  };
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

/**
 * Why a subscription's URL is not acceptable, or undefined: https only, http only to loopback
 * when loopback is allowed (the local runtime), and never a literal non-public address.
 */
export function urlProblem(raw: string, allowLoopback: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Url is not an absolute URL.';
  }
  if (url.username || url.password) return 'Url may not carry credentials.';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const loopback = LOOPBACK_NAMES.has(host.toLowerCase()) || addressKind(host) === 'loopback';
  if (url.protocol === 'http:') {
    if (!(allowLoopback && loopback)) return 'Url must use https (http only to a loopback address on the local runtime).';
  } else if (url.protocol !== 'https:') {
    return 'Url must use https.';
  }
  if (loopback && !allowLoopback) return 'Url may not name a loopback address.';
  const why = isIP(host) ? refusal(host, allowLoopback) : undefined;
  if (why) return `Url may not name a non-public address: ${why}.`;
  return undefined;
}
