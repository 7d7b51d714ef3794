// Decides whether a webhook URL may be called, and which address to pin the connection to,
// so an endpoint cannot aim the host at itself, its network or a cloud metadata service.
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface GuardOptions {
  /** Allow 127.0.0.0/8 and ::1 (local development, tests). */
  allowLoopback?: boolean;
  /** Allow RFC 1918, fc00::/7 and CGNAT 100.64/10 (on-premises deployments). */
  allowPrivate?: boolean;
  /** Replaces dns.lookup (tests). */
  lookup?: (hostname: string) => Promise<dns.LookupAddress[]>;
}

export type GuardReason = 'scheme' | 'credentials' | 'dns' | 'refused_address';

export type GuardResult =
  | { ok: true; url: URL; address: string; family: 4 | 6 }
  | { ok: false; reason: GuardReason; address?: string; detail?: string };

type GuardRefusal = Extract<GuardResult, { ok: false }>;

/** `checkUrl`'s answer: a guard's, or for a name, the name still to resolve. */
export type UrlCheck = GuardResult | { ok: true; url: URL; host: string; address?: undefined; family?: undefined };

const LOOPBACK = new Set(['loopback']);
const PRIVATE = new Set(['private', 'uniqueLocal', 'carrierGradeNat']);
// Never reachable on purpose: link-local holds 169.254.169.254 (cloud metadata), the rest is not unicast.
const ALWAYS_REFUSED = new Set([
  'unspecified',
  'linkLocal',
  'multicast',
  'broadcast',
  'reserved',
  'deprecatedSiteLocal',
]);

// IPv6 forms that carry an IPv4 address in their low 32 bits.
const EMBEDDING_V4 = [
  ipaddr.parseCIDR('::ffff:0:0/96'), // IPv4-mapped
  ipaddr.parseCIDR('::/96'), // IPv4-compatible (deprecated)
  ipaddr.parseCIDR('::ffff:0:0:0/96'), // IPv4-translated (RFC 6145)
  ipaddr.parseCIDR('64:ff9b::/96'), // NAT64 well-known prefix
] as [ipaddr.IPv6, number][];
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16') as [ipaddr.IPv6, number];

/** The range name ipaddr.js gives the address, looking through IPv6 forms that embed IPv4. */
export function addressRange(address: string): string {
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    const range = v6.range();
    if (range === 'unspecified' || range === 'loopback') return range;
    if (EMBEDDING_V4.some(([net, bits]) => v6.match(net, bits))) {
      return ipaddr.fromByteArray(v6.toByteArray().slice(12)).range();
    }
    if (v6.match(...SIX_TO_FOUR)) {
      // 2002:AABB:CCDD::/48 routes to the IPv4 AA.BB.CC.DD; judge it as that address.
      const inner = ipaddr.fromByteArray(v6.toByteArray().slice(2, 6)).range();
      return inner === 'unicast' ? range : inner;
    }
    return range;
  }
  return ip.range();
}

/** Whether a resolved address may be connected to under the options. */
export function isAddressAllowed(address: string, options: GuardOptions = {}): boolean {
  if (!ipaddr.isValid(address)) return false;
  const range = addressRange(address);
  if (ALWAYS_REFUSED.has(range)) return false;
  if (LOOPBACK.has(range)) return options.allowLoopback === true;
  if (PRIVATE.has(range)) return options.allowPrivate === true;
  return true;
}

async function systemLookup(hostname: string): Promise<dns.LookupAddress[]> {
  return dns.promises.lookup(hostname, { all: true, verbatim: true });
}

/**
 * The checks that need no DNS: scheme, credentials, and an address written in the URL. For a
 * name, `address` is absent: whoever connects must resolve it and check the answer
 * (`guardUrl` for one attempt, `guardedLookup` for a pool's new connections).
 */
export function checkUrl(input: string | URL, options: GuardOptions = {}): UrlCheck {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return { ok: false, reason: 'scheme', detail: 'not an absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: 'scheme', detail: url.protocol };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials' };
  // WHATWG URL has already normalised IPv4 forms such as 0x7f.1 and put IPv6 in brackets.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const family = net.isIP(host);
  if (family === 0) return { ok: true, url, host };
  return refusal(host, options) ?? { ok: true, url, address: host, family: family === 6 ? 6 : 4 };
}

function refusal(address: string, options: GuardOptions): GuardRefusal | undefined {
  if (isAddressAllowed(address, options)) return undefined;
  return { ok: false, reason: 'refused_address', address, detail: ipaddr.isValid(address) ? addressRange(address) : 'invalid' };
}

/** Resolves a name and checks every answer, so a name cannot mix a public and an internal one. */
async function resolveChecked(host: string, options: GuardOptions): Promise<{ ok: true; answers: dns.LookupAddress[] } | GuardRefusal> {
  let answers: dns.LookupAddress[];
  try {
    answers = await (options.lookup ?? systemLookup)(host);
  } catch (err) {
    return { ok: false, reason: 'dns', detail: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
  if (answers.length === 0) return { ok: false, reason: 'dns', detail: 'no address' };
  for (const a of answers) {
    const refused = refusal(a.address, options);
    if (refused) return refused;
  }
  return { ok: true, answers };
}

/**
 * Checks scheme and credentials, resolves the host and refuses the URL if any address is
 * refused. The returned address is the one to connect to: send.ts pins it, so a second
 * resolution cannot rebind the name.
 */
export async function guardUrl(input: string | URL, options: GuardOptions = {}): Promise<GuardResult> {
  const checked = checkUrl(input, options);
  if (!checked.ok || checked.address !== undefined) return checked as GuardResult;
  const resolved = await resolveChecked(checked.host, options);
  if (!resolved.ok) return resolved;
  const first = resolved.answers[0];
  return { ok: true, url: checked.url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** The error a guarded lookup fails with when the name resolves to an address refused. */
export const REFUSED_ADDRESS_CODE = 'ERR_DIWAN_REFUSED_ADDRESS';

/** A guarded lookup's failure: the address refused and its range (or the DNS error), as `guardUrl` reports them. */
export interface LookupRefusal extends Error {
  code: string;
  address?: string;
  detail: string;
}

/**
 * A `lookup` for pooled connections: each new connection resolves the name and checks every
 * answer as `guardUrl` does, so a pool needs no resolution per attempt (`checkUrl` does the rest).
 */
export function guardedLookup(options: GuardOptions = {}): LookupFunction {
  return (hostname, opts, callback) => {
    void resolveChecked(hostname, options).then((r) => {
      if (!r.ok) {
        const err: LookupRefusal = Object.assign(new Error(`${hostname}: ${r.detail}`), {
          code: r.reason === 'dns' ? 'ENOTFOUND' : REFUSED_ADDRESS_CODE,
          detail: r.detail ?? '',
          ...(r.address !== undefined ? { address: r.address } : {}),
        });
        return void callback(err, '', 0);
      }
      answer(r.answers, opts.all, callback);
    });
  };
}

/** A `lookup` that answers one address whatever the name: a connection pinned to the guard's answer. */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, opts, callback) => answer([{ address, family }], opts.all, callback);
}

/** Gives a lookup's caller every answer, or the first, as it asked (`net.connect` with `autoSelectFamily` asks for all). */
function answer(answers: dns.LookupAddress[], all: boolean | undefined, callback: Parameters<LookupFunction>[2]): void {
  if (all) (callback as (e: null, a: dns.LookupAddress[]) => void)(null, answers);
  else callback(null, answers[0].address, answers[0].family);
}
