/**
 * IP addresses and CIDR ranges, for TRUSTED_PROXIES: `10.0.0.2`, `10.0.0.0/8`, `fd00::/8`,
 * `::1`. Addresses are compared as numbers, so `10.0.0.02`-style spellings never match by
 * accident and IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is its IPv4 address.
 */

/** A parsed address: its family and its value (IPv4 in 32 bits, IPv6 in 128). */
interface Parsed {
  v6: boolean;
  value: bigint;
}

function parseV4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseV6(text: string): bigint | null {
  if (text.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(text)) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    const parts = half.split(":");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = parseV4(part);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(part)) {
        out.push(Number.parseInt(part, 16));
      } else return null;
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  let value = 0n;
  for (const g of [...head, ...Array(missing).fill(0), ...tail]) value = (value << 16n) | BigInt(g);
  return value;
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** Parses an IPv4 or IPv6 address (IPv4-mapped IPv6 folded to IPv4); null when it is none. */
export function parseAddress(text: string): Parsed | null {
  const v4 = parseV4(text);
  if (v4 !== null) return { v6: false, value: v4 };
  const v6 = parseV6(text);
  if (v6 === null) return null;
  if (v6 >> 32n === MAPPED_PREFIX >> 32n) return { v6: false, value: v6 & 0xffffffffn };
  return { v6: true, value: v6 };
}

interface Range {
  v6: boolean;
  bits: bigint;
  prefix: bigint;
}

/** A set of addresses and ranges answering "is this address in it?". */
export interface AddressSet {
  has(address: string): boolean;
}

/**
 * The set of `entries` (addresses or CIDR ranges); entries that are neither are returned in
 * `invalid` (the set leaves them out).
 */
export function addressSet(entries: readonly string[]): { set: AddressSet; invalid: string[] } {
  const ranges: Range[] = [];
  const invalid: string[] = [];
  for (const entry of entries) {
    const [text, length, extra] = entry.trim().split("/");
    const address = parseAddress(text);
    const width = address?.v6 ? 128 : 32;
    const bits = length === undefined ? width : /^\d{1,3}$/.test(length) ? Number(length) : -1;
    if (!address || extra !== undefined || bits < 0 || bits > width) {
      invalid.push(entry);
      continue;
    }
    const shift = BigInt(width - bits);
    ranges.push({ v6: address.v6, bits: BigInt(bits), prefix: address.value >> shift });
  }
  const set: AddressSet = {
    has(text: string): boolean {
      const address = parseAddress(text.trim());
      if (!address) return false;
      const width = address.v6 ? 128n : 32n;
      return ranges.some((r) =>
        r.v6 === address.v6 && address.value >> (width - r.bits) === r.prefix
      );
    },
  };
  return { set, invalid };
}
