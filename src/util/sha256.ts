/**
 * HMAC-SHA-256 (RFC 2104 over FIPS 180-4 SHA-256) of a string, computed in plain
 * JavaScript on reused buffers. Every API write hashes its document (and its oplog entry)
 * for the ETag: the runtime's hash objects cost a native call, a handle and a Buffer per
 * step, several times the hashing itself for a document of a few hundred bytes. Here the
 * text is encoded once into a reused byte buffer (the inner pad in front, the padding
 * behind) and hashed in place; nothing is allocated but the answer's hex string.
 */

const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);
const BLOCK = 64;

/** The message schedule and the running state, reused by every hash. */
const W = new Int32Array(16);
const state = new Int32Array(8);

/**
 * Runs the compression function over the whole blocks of `view[0, length)`. Each round
 * extends the message schedule as it goes (a ring of the 16 last words).
 */
function compress(view: DataView, length: number): void {
  let h0 = state[0], h1 = state[1], h2 = state[2], h3 = state[3];
  let h4 = state[4], h5 = state[5], h6 = state[6], h7 = state[7];
  for (let at = 0; at < length; at += BLOCK) {
    for (let i = 0; i < 16; i++) W[i] = view.getInt32(at + i * 4);
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let i = 0; i < 64; i++) {
      let w: number;
      if (i < 16) w = W[i];
      else {
        const w15 = W[(i - 15) & 15], w2 = W[(i - 2) & 15];
        const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
        const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
        w = W[i & 15] = (W[i & 15] + s0 + W[(i - 7) & 15] + s1) | 0;
      }
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + w) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  state[0] = h0;
  state[1] = h1;
  state[2] = h2;
  state[3] = h3;
  state[4] = h4;
  state[5] = h5;
  state[6] = h6;
  state[7] = h7;
}

/**
 * Appends SHA-256's padding to the message `bytes[0, length)` (which the buffer has room
 * for: up to 72 more bytes) and returns the padded length. `total` is the length of the
 * whole message, bytes already compressed included.
 */
function pad(bytes: Uint8Array, length: number, total: number): number {
  bytes[length++] = 0x80;
  while (length % BLOCK !== 56) bytes[length++] = 0;
  const bits = total * 8;
  const high = Math.floor(bits / 0x100000000);
  bytes[length++] = high >>> 24;
  bytes[length++] = high >>> 16;
  bytes[length++] = high >>> 8;
  bytes[length++] = high;
  bytes[length++] = bits >>> 24;
  bytes[length++] = bits >>> 16;
  bytes[length++] = bits >>> 8;
  bytes[length++] = bits;
  return length;
}

const encoder = new TextEncoder();
/** The inner message: the key's inner pad, the text's UTF-8, the padding. Grows as needed. */
let message = new Uint8Array(4096);
let messageView = new DataView(message.buffer);
/** The outer message: the key's outer pad, the inner hash, the padding (two blocks). */
const outer = new Uint8Array(2 * BLOCK);
const outerView = new DataView(outer.buffer);
const keyBlock = new Uint8Array(BLOCK);
const digestBytes = new Uint8Array(32);

/** SHA-256 of `bytes[0, length)` (`view` over the same memory) into `digestBytes`. */
function sha256Into(bytes: Uint8Array, view: DataView, length: number): void {
  state.set(INITIAL);
  compress(view, pad(bytes, length, length));
  for (let i = 0; i < 8; i++) {
    const v = state[i];
    digestBytes[i * 4] = v >>> 24;
    digestBytes[i * 4 + 1] = v >>> 16;
    digestBytes[i * 4 + 2] = v >>> 8;
    digestBytes[i * 4 + 3] = v;
  }
}

/** SHA-256 of `bytes` (a key longer than a block is hashed first). */
export function sha256(bytes: Uint8Array): Uint8Array {
  const room = new Uint8Array(bytes.length + 2 * BLOCK);
  room.set(bytes);
  sha256Into(room, new DataView(room.buffer), bytes.length);
  return digestBytes.slice();
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * HMAC-SHA-256 of `text` (its UTF-8) keyed with `key` (a string's UTF-8, or bytes), as
 * lower-case hex of the leading `bytes` bytes of the MAC (all 32 by default): the value of
 * `createHmac("sha256", key).update(text).digest("hex")`, cut.
 */
export function hmacSha256Hex(key: Uint8Array | string, text: string, bytes = 32): string {
  let k = typeof key === "string" ? encoder.encode(key) : key;
  if (k.length > BLOCK) k = sha256(k);
  keyBlock.fill(0);
  keyBlock.set(k);
  // UTF-8 takes at most 3 bytes per UTF-16 unit; the padding at most 72.
  const room = BLOCK + text.length * 3 + 2 * BLOCK;
  if (message.length < room) {
    message = new Uint8Array(Math.max(room, message.length * 2));
    messageView = new DataView(message.buffer);
  }
  for (let i = 0; i < BLOCK; i++) {
    message[i] = keyBlock[i] ^ 0x36;
    outer[i] = keyBlock[i] ^ 0x5c;
  }
  const written = encoder.encodeInto(text, message.subarray(BLOCK)).written;
  sha256Into(message, messageView, BLOCK + written);
  outer.set(digestBytes, BLOCK);
  sha256Into(outer, outerView, BLOCK + 32);
  let out = "";
  for (let i = 0; i < bytes; i++) out += HEX[digestBytes[i]];
  return out;
}
