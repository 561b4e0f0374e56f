/**
 * Document ETags, made so that an ETag tells nothing about a document's content, hidden
 * fields above all.
 *
 * Eve's ETag (`document_etag`) is a SHA-1 of the whole stored document, hidden fields
 * included. Whoever reads every other field of a document (and its `_updated`) can then
 * hash the visible part with each candidate value of a hidden one (a salary, a PIN, a
 * short token) and recover that value offline from the ETag. Deliberately, no ETag here is
 * a hash anyone could recompute:
 *
 * - A write through the API stores with the document 160 fresh random bits, drawn for this
 *   write and kept nowhere: no guess can be checked against them. The ETag changes with every
 *   write, a change to a hidden field alone included (rewriting identical content too), and
 *   every instance reading the document sees the same one, since they all read it from the
 *   store. Versions keep the ETag they had when current: the shadow copies store it with
 *   them. (A hash of the document keyed with a random value used once, which earlier
 *   versions stored, is no less random and tells no more; it cost the document's text and
 *   two SHA-256 runs per write.)
 * - A document written outside the API has no stored ETag: it gets one computed from the
 *   whole stored document, hidden fields included (so any change to it changes the ETag),
 *   as a keyed hash (HMAC-SHA-256, 160 bits kept) rather than a plain one, so that without
 *   the key no candidate can be checked. The key is ETAG_SECRET when set (every instance
 *   must then share it); unset, it is a random key created once and kept in the database
 *   (collection {@link KEY_COLLECTION}), so every instance sharing a database agrees with
 *   no setting at all and no default key anyone could know. A per-process random key would
 *   keep the secret as well but would make instances (and restarts) disagree.
 *
 * Random values rather than the shared key for API writes: the ETags clients see most never
 * depend on a long-lived key, so no key that leaks (a settings file, a backup) ever opens
 * them.
 */
import { createHash } from "node:crypto";
import { canonicalEjsonWithout } from "../doc/bson.ts";
import type { Doc } from "../store/store.ts";
import type { Runtime } from "./runtime.ts";

/** Where the generated key lives when ETAG_SECRET is unset (one document, `_id` "etag"). */
export const KEY_COLLECTION = "_service_keys";

const KEY_ID = "etag";

/** 160 random bits as 40 hex digits. */
function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/**
 * Random bytes drawn a pool at a time: one `getRandomValues` call serves many writes (each
 * ETag is still 160 fresh bits, used once and then overwritten by the next pool).
 */
const KEY_BYTES = 20;
const pool = new Uint8Array(4096);
let poolAt = pool.length;

function randomKey(): Uint8Array {
  if (poolAt + KEY_BYTES > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  const key = pool.subarray(poolAt, poolAt + KEY_BYTES);
  poolAt += KEY_BYTES;
  return key;
}

const HEX_CODES = Array.from({ length: 16 }, (_, i) => i.toString(16).charCodeAt(0));
const tokenCodes: number[] = new Array(2 * KEY_BYTES).fill(0);

const BLOCK = 64;
const innerPad = new Uint8Array(BLOCK);
const outerPad = new Uint8Array(BLOCK);
const encoder = new TextEncoder();

/**
 * HMAC-SHA-256 (RFC 2104) of `text` as hex, written with two plain hashes: the same value as
 * `createHmac("sha256", key)`, which builds a stream object, key buffers and two hash
 * objects per call and costs several times as much per write.
 * @param options.bytes the leading bytes wanted (the hex of all 32 by default); a string of
 * their own, where a slice of the whole hex would keep the whole alive with every document.
 */
export function hmacSha256Hex(
  key: Uint8Array | string,
  text: string,
  options: { bytes?: number } = {},
): string {
  let bytes = typeof key === "string" ? encoder.encode(key) : key;
  if (bytes.length > BLOCK) bytes = createHash("sha256").update(bytes).digest();
  for (let i = 0; i < BLOCK; i++) {
    const k = i < bytes.length ? bytes[i] : 0;
    innerPad[i] = k ^ 0x36;
    outerPad[i] = k ^ 0x5c;
  }
  const inner = createHash("sha256").update(innerPad).update(text).digest();
  const digest = createHash("sha256").update(outerPad).update(inner).digest();
  return digest.toString("hex", 0, options.bytes ?? digest.length);
}

/**
 * HMAC-SHA-256 of `text` (a document's but its ETag and links), 160 bits as 40 hex digits
 * (Eve's length).
 */
function keyedHash(text: string, key: Uint8Array | string): string {
  return hmacSha256Hex(key, text, { bytes: 20 });
}

/**
 * The ETag of a document about to be stored by a write through the API, or of one stored
 * once and never rewritten (an oplog entry): 160 fresh random bits as 40 hex digits. A
 * keyed hash of the content under a key drawn for this write alone carries no more: its
 * key is as random, used once and kept nowhere, so the hash is a value no one can predict
 * or check, and the content's text and two SHA-256 runs (6-8 us a write) buy nothing a
 * random value does not give.
 */
export function freshToken(): string {
  const key = randomKey();
  for (let i = 0; i < KEY_BYTES; i++) {
    tokenCodes[2 * i] = HEX_CODES[key[i] >> 4];
    tokenCodes[2 * i + 1] = HEX_CODES[key[i] & 15];
  }
  // One flat string of 40 characters (appending 20 pairs made 19 intermediate strings).
  return String.fromCharCode.apply(null, tokenCodes);
}

/**
 * The ETag of `doc`, a whole stored document that has none stored (written outside the
 * API): its hash keyed with the service's ETag key.
 */
export async function derivedEtag(rt: Runtime, doc: Doc): Promise<string> {
  const settings = rt.settings;
  // The canonical text: ETags derived (and cached by clients) before stay the same.
  const key = await etagKey(rt);
  return keyedHash(canonicalEjsonWithout(doc, settings.ETAG, settings.LINKS), key);
}

const keys = new WeakMap<object, Promise<string>>();

/** The key of {@link derivedEtag}: read (or created) once per runtime. */
function etagKey(rt: Runtime): Promise<string> {
  const { instance } = rt;
  let key = keys.get(instance);
  if (!key) {
    key = loadKey(rt);
    keys.set(instance, key);
    // A store failure is not remembered: the next request tries again.
    key.catch(() => keys.delete(instance));
  }
  return key;
}

async function loadKey(rt: Runtime): Promise<string> {
  const secret = rt.settings.ETAG_SECRET;
  if (typeof secret === "string" && secret !== "") return secret;
  const collection = rt.store.collection(KEY_COLLECTION);
  const stored = await collection.findOne({ _id: KEY_ID });
  if (typeof stored?.key === "string") return stored.key;
  try {
    await collection.insertMany([{ _id: KEY_ID, key: randomHex() + randomHex() }]);
  } catch (error) {
    // Another instance created it first (a duplicate `_id`): its key is the one.
    rt.log.log("debug", "etag key: created by another instance", { error: String(error) });
  }
  const created = await collection.findOne({ _id: KEY_ID });
  if (typeof created?.key !== "string") throw new Error("the ETag key could not be stored");
  return created.key;
}
