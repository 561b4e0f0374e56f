/**
 * @module
 * A MongoDB wire-protocol stand-in for measuring the client side: it answers from memory, at
 * once, the few commands `deno task bench --mongo` makes (the handshake, inserts, a find by
 * `_id` or a page with skip and limit, the count and unique-check aggregations, index
 * creation), so that the time of a request is the time the service (or the raw driver)
 * spends on it, as it is against a real server that answers in tens of microseconds. The
 * jongodb emulator, the other choice here, spends milliseconds of CPU per page and makes the
 * server the bottleneck. Not a database: filters other than on `_id` (or `$and` holding one)
 * match every document, and sort and projection are ignored.
 *
 * ```sh
 * deno run -A bench/wire_stub.ts PORT     # prints "serving mongodb://127.0.0.1:PORT/"
 * ```
 */
import { BSON, Long, ObjectId } from "mongodb";

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

type Doc = Record<string, unknown>;

/** Collections by namespace ("db.coll"): the documents in insertion order and by `_id`. */
const collections = new Map<string, { docs: Doc[]; byId: Map<string, Doc> }>();
let connections = 0;

function collectionOf(ns: string) {
  let c = collections.get(ns);
  if (!c) collections.set(ns, c = { docs: [], byId: new Map() });
  return c;
}

function idKey(id: unknown): string {
  return id instanceof ObjectId ? id.toHexString() : JSON.stringify(id);
}

/** The `_id` a filter names (`{_id: x}` or `{$and: [{_id: x}, ...]}`), else undefined. */
function idOf(filter: Doc | undefined): unknown {
  if (!filter) return undefined;
  if ("_id" in filter) return filter._id;
  const and = filter.$and;
  if (Array.isArray(and)) {
    for (const part of and) {
      const id = idOf(part as Doc);
      if (id !== undefined) return id;
    }
  }
  return undefined;
}

function matching(ns: string, filter: Doc | undefined): Doc[] {
  const c = collectionOf(ns);
  const id = idOf(filter);
  if (id === undefined) return c.docs;
  if (id && typeof id === "object" && !(id instanceof ObjectId)) {
    const $in = (id as Doc).$in;
    if (Array.isArray($in)) return $in.map((i) => c.byId.get(idKey(i))).filter((d) => !!d) as Doc[];
    return c.docs;
  }
  const doc = c.byId.get(idKey(id));
  return doc ? [doc] : [];
}

function hello(): Doc {
  return {
    helloOk: true,
    ismaster: true,
    isWritablePrimary: true,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: connections,
    minWireVersion: 0,
    maxWireVersion: 21,
    readOnly: false,
    ok: 1,
  };
}

/** The answer to one command (`cmd`, with its kind-1 sections' documents merged in). */
function answer(cmd: Doc): Doc {
  const name = Object.keys(cmd)[0];
  const db = String(cmd.$db ?? "admin");
  const ns = `${db}.${String(cmd[name])}`;
  switch (name) {
    case "hello":
    case "isMaster":
    case "ismaster":
      return hello();
    case "find": {
      let docs = matching(ns, cmd.filter as Doc);
      const skip = Number(cmd.skip ?? 0);
      const limit = Math.abs(Number(cmd.limit ?? 0));
      docs = docs.slice(skip, limit ? skip + limit : undefined);
      return { cursor: { firstBatch: docs, id: Long.ZERO, ns }, ok: 1 };
    }
    case "aggregate": {
      const pipeline = cmd.pipeline as Doc[];
      const match = pipeline[0]?.$match as Doc | undefined;
      let docs = matching(ns, match);
      // A filter other than on `_id` is not evaluated: count as no match (unique checks).
      if (match && Object.keys(match).length > 0 && idOf(match) === undefined) docs = [];
      const limit = pipeline.find((s) => "$limit" in s)?.$limit as number | undefined;
      const n = limit === undefined ? docs.length : Math.min(limit, docs.length);
      const group = pipeline.some((s) => "$group" in s);
      const batch = group ? (n > 0 ? [{ _id: 1, n }] : []) : docs;
      return { cursor: { firstBatch: batch, id: Long.ZERO, ns }, ok: 1 };
    }
    case "insert": {
      const c = collectionOf(ns);
      const docs = cmd.documents as Doc[];
      for (const doc of docs) {
        c.docs.push(doc);
        c.byId.set(idKey(doc._id), doc);
      }
      return { n: docs.length, ok: 1 };
    }
    case "update":
    case "delete":
      return { n: 0, nModified: 0, ok: 1 };
    case "count":
      return { n: collectionOf(ns).docs.length, ok: 1 };
    case "listIndexes":
      return { cursor: { firstBatch: [], id: Long.ZERO, ns }, ok: 1 };
    case "buildInfo":
    case "buildinfo":
      return { version: "7.0.0", versionArray: [7, 0, 0, 0], ok: 1 };
    default:
      // ping, endSessions, createIndexes, killCursors, ...
      return { ok: 1 };
  }
}

function header(length: number, requestId: number, responseTo: number, opCode: number) {
  const out = new Uint8Array(length);
  const view = new DataView(out.buffer);
  view.setInt32(0, length, true);
  view.setInt32(4, requestId, true);
  view.setInt32(8, responseTo, true);
  view.setInt32(12, opCode, true);
  return { out, view };
}

let nextId = 1;

/** The reply to one whole message (header included), or null for a message it ignores. */
function reply(message: Uint8Array): Uint8Array | null {
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const requestId = view.getInt32(4, true);
  const opCode = view.getInt32(12, true);
  if (opCode === OP_MSG) {
    let at = 20; // header, flagBits
    let cmd: Doc = {};
    const end = message.byteLength;
    while (at < end) {
      const kind = message[at++];
      if (kind === 0) {
        const size = view.getInt32(at, true);
        cmd = { ...cmd, ...BSON.deserialize(message.subarray(at, at + size)) };
        at += size;
      } else if (kind === 1) {
        const size = view.getInt32(at, true);
        const stop = at + size;
        let p = at + 4;
        const nameEnd = message.indexOf(0, p);
        const name = new TextDecoder().decode(message.subarray(p, nameEnd));
        p = nameEnd + 1;
        const docs: Doc[] = [];
        while (p < stop) {
          const docSize = view.getInt32(p, true);
          docs.push(BSON.deserialize(message.subarray(p, p + docSize)));
          p += docSize;
        }
        cmd[name] = docs;
        at = stop;
      } else {
        return null;
      }
    }
    const body = BSON.serialize(answer(cmd));
    const { out, view: v } = header(16 + 4 + 1 + body.length, nextId++, requestId, OP_MSG);
    v.setUint32(16, 0, true);
    out[20] = 0;
    out.set(body, 21);
    return out;
  }
  if (opCode === OP_QUERY) {
    // flags, full collection name (cstring), numberToSkip, numberToReturn, query
    let p = 20;
    p = message.indexOf(0, p) + 1 + 8;
    const size = view.getInt32(p, true);
    const query = BSON.deserialize(message.subarray(p, p + size));
    const body = BSON.serialize(answer(query));
    const { out, view: v } = header(16 + 20 + body.length, nextId++, requestId, OP_REPLY);
    v.setInt32(16, 0, true); // responseFlags
    v.setBigInt64(20, 0n, true); // cursorID
    v.setInt32(28, 0, true); // startingFrom
    v.setInt32(32, 1, true); // numberReturned
    out.set(body, 36);
    return out;
  }
  return null;
}

async function serveConnection(conn: Deno.Conn): Promise<void> {
  connections++;
  let pending = new Uint8Array(0);
  const chunk = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await conn.read(chunk);
      if (n === null) return;
      const joined = new Uint8Array(pending.length + n);
      joined.set(pending);
      joined.set(chunk.subarray(0, n), pending.length);
      let at = 0;
      while (joined.length - at >= 4) {
        const length = new DataView(joined.buffer, at, 4).getInt32(0, true);
        if (joined.length - at < length) break;
        const out = reply(joined.subarray(at, at + length));
        at += length;
        if (out) {
          let written = 0;
          while (written < out.length) written += await conn.write(out.subarray(written));
        }
      }
      pending = joined.slice(at);
    }
  } catch {
    // The client went away.
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

if (import.meta.main) {
  const port = Number(Deno.args[0] ?? 0);
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  const addr = listener.addr as Deno.NetAddr;
  console.error(`serving mongodb://127.0.0.1:${addr.port}/`);
  for await (const conn of listener) serveConnection(conn);
}
