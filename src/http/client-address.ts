/**
 * The client's address for rate limiting: the socket peer, or, when the peer is a trusted
 * proxy (TRUSTED_PROXIES), the nearest untrusted address in `X-Forwarded-For`. Clients
 * talking to the service directly cannot spoof it: their own header is ignored.
 */

import type { AddressSet } from "../util/ip.ts";

/** At most this many `X-Forwarded-For` entries are read (from the right). */
const MAX_HOPS = 32;

/** What an IPv4 or IPv6 address may look like (anything else in the header is refused). */
const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/** Strips the IPv4-mapped IPv6 prefix, so `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
function normalize(address: string): string {
  const trimmed = address.trim();
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(trimmed) ? trimmed.slice(7) : trimmed;
}

/** Where a request's peer address is kept once read (see {@link clientIp}). */
const PEER: unique symbol = Symbol("peer address");

type ServeInfo = { remoteAddr?: { hostname?: string }; [PEER]?: string };

/**
 * The socket peer address as the server gives it (`Deno.serve`'s info), or "unknown". Read
 * once per request and kept on the info: `Deno.serve` makes a new address object, asking the
 * server for it, at every read (the request log and the route both want it).
 */
export function clientIp(c: { env: unknown }): string {
  const info = c.env as ServeInfo | undefined | null;
  if (info === undefined || info === null) return "unknown";
  const known = info[PEER];
  if (known !== undefined) return known;
  const ip = info.remoteAddr?.hostname ?? "unknown";
  if (Object.isExtensible(info)) info[PEER] = ip;
  return ip;
}

/**
 * Keeps the peer address of a request's `info` its handler has read (`remoteAddr`, undefined
 * when there is none), so that {@link clientIp} does not ask the server for it again.
 */
export function rememberPeer(
  info: unknown,
  remoteAddr: { hostname?: string } | undefined,
): void {
  const served = info as ServeInfo | undefined | null;
  if (served === undefined || served === null || !Object.isExtensible(served)) return;
  served[PEER] = remoteAddr?.hostname ?? "unknown";
}

/** The socket peer address, IPv4-mapped IPv6 folded to IPv4, or "unknown". */
export function peerAddress(c: { env: unknown }): string {
  const ip = clientIp(c);
  return ip === "unknown" ? ip : normalize(ip);
}

/** The client address of a request (see the module comment). */
export function clientAddress(
  c: { env: unknown; req: { header(name: string): string | undefined } },
  trustedProxies: AddressSet,
): string {
  const peer = peerAddress(c);
  if (!trustedProxies.has(peer)) return peer;
  const forwarded = c.req.header("x-forwarded-for");
  if (!forwarded) return peer;
  const hops = forwarded.split(",").slice(-MAX_HOPS).map(normalize).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (trustedProxies.has(hops[i])) continue;
    // A proxy that appends something other than an address is misconfigured: use the peer.
    return ADDRESS.test(hops[i]) ? hops[i] : peer;
  }
  return hops[0] ?? peer;
}
