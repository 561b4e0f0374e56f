/**
 * Document ETags, made so that an ETag tells nothing about a document's content, hidden
 * fields above all.
 *
 * Eve's ETag (`document_etag`) is a SHA-1 of the whole stored document, hidden fields
 * included. Whoever reads every other field of a document (and its `_updated`) can then
 * hash the visible part with each candidate value of a hidden one (a salary, a PIN, a
 * short token) and recover that value offline from the ETag. Deliberately, this service
 * does not compute ETags from content:
 *
 * - A write through the API stores a fresh random ETag (160 random bits, hex) with the
 *   document: once per write, cheaper than hashing the document. It changes with every
 *   write, a change to a hidden field alone included, and is the same for every instance
 *   that reads the document, since they all read it from the store. Versions keep the ETag
 *   they had when current: the shadow copies store it with them.
 * - A document written outside the API has no stored ETag: it gets one computed from the
 *   whole stored document, hidden fields included (so any change to it changes the ETag),
 *   as a keyed hash (HMAC-SHA-256, 160 bits kept) rather than a plain one, so that without
 *   the key no candidate can be checked. The key is ETAG_SECRET when set (every instance
 *   must then share it); unset, it is a random key created once and kept in the database
 *   (collection {@link KEY_COLLECTION}), so every instance sharing a database agrees with
 *   no setting at all and no default key anyone could know. A per-process random key would
 *   keep the secret as well but would make instances (and restarts) disagree.
 *
 * A random ETag over a keyed content hash for API writes: the ETags clients see most never
 * depend on a key, so no key that leaks (a settings file, a backup) ever opens them.
 */
import { createHmac } from "node:crypto";
import { canonicalEjson } from "../store/bson.ts";
import type { Doc } from "../store/store.ts";
import type { Runtime } from "./runtime.ts";

/** Where the generated key lives when ETAG_SECRET is unset (one document, `_id` "etag"). */
export const KEY_COLLECTION = "_service_keys";

const KEY_ID = "etag";

/** A new random ETag: 160 random bits as 40 hex digits (the length of Eve's SHA-1). */
export function newEtag(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/**
 * The ETag of `doc`, a whole stored document that has none stored (written outside the
 * API): a keyed hash of everything in it but `etagField` and links.
 */
export async function derivedEtag(rt: Runtime, doc: Doc): Promise<string> {
  const s = rt.settings;
  const { [s.ETAG]: _etag, [s.LINKS]: _links, ...rest } = doc;
  const key = await etagKey(rt);
  return createHmac("sha256", key).update(canonicalEjson(rest)).digest("hex").slice(0, 40);
}

const keys = new WeakMap<Runtime, Promise<string>>();

/** The key of {@link derivedEtag}: read (or created) once per runtime. */
function etagKey(rt: Runtime): Promise<string> {
  let key = keys.get(rt);
  if (!key) {
    key = loadKey(rt);
    keys.set(rt, key);
    // A store failure is not remembered: the next request tries again.
    key.catch(() => keys.delete(rt));
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
    await collection.insertMany([{ _id: KEY_ID, key: newEtag() + newEtag() }]);
  } catch (error) {
    // Another instance created it first (a duplicate `_id`): its key is the one.
    rt.log.log("debug", "etag key: created by another instance", { error: String(error) });
  }
  const created = await collection.findOne({ _id: KEY_ID });
  if (typeof created?.key !== "string") throw new Error("the ETag key could not be stored");
  return created.key;
}
