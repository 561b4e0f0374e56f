/**
 * The typed client (src/client/) driving a running service over HTTP, on both stores: CRUD
 * with ETags, listing and paging, lookups, embedding, sub-resources, validation and
 * conflict errors, bulk inserts, media upload and download, the change feed with resume,
 * the credentials schemes, retries, aborts and network failures.
 */
import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { scenario, STORES } from "../support/harness.ts";
import { SECRET_HASH } from "../support/auth.ts";
import {
  AbortedError,
  AuthError,
  type ChangeEvent,
  ClientError,
  ConflictError,
  createClient,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ValidationError,
} from "../../src/client/mod.ts";
import { type Api, paths, type PeopleDocument } from "../../config/api_types.ts";

const SHIPPED = JSON.parse(
  Deno.readTextFileSync(new URL("../../config/settings.json", import.meta.url)),
);

/** Collects `count` events of a feed, within a deadline. */
async function take<D>(
  feed: AsyncGenerator<ChangeEvent<D>>,
  count: number,
  ms = 10_000,
): Promise<ChangeEvent<D>[]> {
  const out: ChangeEvent<D>[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`feed: ${out.length} of ${count} events`)), ms);
  });
  try {
    while (out.length < count) {
      const next = await Promise.race([feed.next(), deadline]);
      if (next.done) break;
      out.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}

scenario(
  "client: create, get by id and by lookup, list with where/sort/paging, every page",
  SHIPPED,
  async (_, running) => {
    const api = createClient<Api>({ baseUrl: running.url, paths });
    const people = api.resource("people");
    const names = ["Ada", "Bea", "Cid", "Dot", "Eve"];
    const written = await people.create(names.map((n, i) => ({ firstname: n, lastname: `L${i}` })));
    assert.equal(written.length, 5);
    assert.ok(written.every((w) => w._status === "OK" && typeof w._etag === "string"));
    const one = await people.create({ lastname: "Lovelace", firstname: "Ada", role: ["author"] });
    assert.equal(one._status, "OK");

    const byId = await people.get(one._id);
    assert.equal(byId.lastname, "Lovelace");
    assert.equal(byId._etag, one._etag);
    const byLookup = await people.get({ lastname: "Lovelace" });
    assert.equal(byLookup._id, one._id);

    const page = await people.list({
      where: { firstname: "Ada" },
      sort: ["-lastname"],
    });
    assert.deepEqual(page.items.map((p) => p.lastname), ["Lovelace", "L0"]);
    assert.equal(page.meta.total, 2);

    const inList = await people.list({ where: { role: { $in: ["author"] } } });
    assert.deepEqual(inList.items.map((p) => p.lastname), ["Lovelace"]);

    const pages: string[][] = [];
    for await (const p of people.pages({ sort: ["lastname"], maxResults: 2 })) {
      pages.push(p.items.map((d) => d.lastname!));
    }
    assert.deepEqual(pages, [["L0", "L1"], ["L2", "L3"], ["L4", "Lovelace"]]);
    const all: PeopleDocument[] = [];
    for await (const d of people.all({ maxResults: 4, sort: ["-lastname"] })) all.push(d);
    assert.equal(all.length, 6);
    assert.equal(all[0].lastname, "Lovelace");

    await assert.rejects(people.get("0123456789abcdef01234567"), NotFoundError);
  },
);

scenario(
  "client: patch, put and delete send If-Match from the last known ETag",
  SHIPPED,
  async (_, running) => {
    const api = createClient<Api>({ baseUrl: running.url, paths });
    const people = api.resource("people");
    const created = await people.create({ lastname: "Hopper", firstname: "Grace" });
    // The ETag of the create is used: no read needed.
    const patched = await people.patch(created._id, { firstname: "Amazing Grace" });
    assert.notEqual(patched._etag, created._etag);
    // A stale copy of the document still works: the client knows the newer ETag.
    const put = await people.put(created, { lastname: "Hopper", firstname: "G." });
    assert.equal((await people.get(created._id)).firstname, "G.");

    // Someone else changes it: the next write is a typed conflict with the current document.
    const other = createClient<Api>({ baseUrl: running.url, paths }).resource("people");
    await other.patch(created._id, { firstname: "Someone else" }, { etag: put._etag });
    const conflict = await people.patch(created._id, { firstname: "Mine" }).then(
      () => assert.fail("a stale ETag must be refused"),
      (error) => error,
    );
    assert.ok(conflict instanceof ConflictError);
    assert.ok(conflict instanceof ClientError);
    assert.equal(conflict.status, 412);
    assert.equal((conflict.current as PeopleDocument).firstname, "Someone else");
    assert.ok(conflict.cause instanceof Error);
    // The conflict's read taught the client the current ETag: trying again succeeds.
    await people.patch(created._id, { firstname: "Mine" });
    assert.equal((await people.get(created._id)).firstname, "Mine");

    await people.delete(created._id);
    await assert.rejects(people.get(created._id), NotFoundError);
    // Without any known ETag the service asks for one (428), a clear error too.
    const fresh = createClient<Api>({ baseUrl: running.url, paths }).resource("people");
    const again = await people.create({ lastname: "Nobody" });
    await assert.rejects(fresh.delete(again._id), (e: ClientError & { status: number }) => {
      assert.equal(e.status, 428);
      return true;
    });
  },
);

scenario(
  "client: validation errors carry per-field issues, single and bulk",
  SHIPPED,
  async (_, running) => {
    const api = createClient<Api>({ baseUrl: running.url, paths });
    const people = api.resource("people");
    const single = await people.create({ lastname: "x".repeat(40) }).catch((e) => e);
    assert.ok(single instanceof ValidationError);
    assert.equal(single.status, 422);
    assert.match(String(single.issues.lastname), /max length/i);
    await people.create({ lastname: "Taken" });
    const bulk = await people.create([{ lastname: "Fine" }, { lastname: "Taken" }]).catch((e) => e);
    assert.ok(bulk instanceof ValidationError);
    assert.deepEqual(bulk.items.map((i) => i.status), ["OK", "ERR"]);
    assert.match(String(bulk.items[1].issues.lastname), /unique/i);
    assert.equal((await people.list({ where: { lastname: "Fine" } })).items.length, 0);
  },
);

scenario(
  "client: embedded relations and sub-resources with URL variables",
  SHIPPED,
  async (_, running) => {
    const api = createClient<Api>({ baseUrl: running.url, paths });
    const owner = await api.resource("people").create({ lastname: "Austen" });
    await api.resource("works").create({ title: "Emma", owner: owner._id });
    const [work] = (await api.resource("works").list({ embedded: { owner: 1 } })).items;
    assert.equal(typeof work.owner, "object");
    assert.equal((work.owner as PeopleDocument).lastname, "Austen");
    const hers = api.resource("people_works", { owner: owner._id });
    const listed = await hers.list();
    assert.deepEqual(listed.items.map((w) => w.title), ["Emma"]);
    assert.throws(() => (api.resource as (n: string) => unknown)("people_works"), TypeError);
  },
);

scenario("client: projection", SHIPPED, async (_, running) => {
  const people = createClient<Api>({ baseUrl: running.url, paths }).resource("people");
  const { _id } = await people.create({ lastname: "Curie", firstname: "Marie" });
  const [listed] = (await people.list({ projection: { lastname: 1 } })).items;
  assert.equal(listed.lastname, "Curie");
  assert.equal(listed.firstname, undefined);
  const one = await people.get(_id, { projection: { firstname: 0 } });
  assert.equal(one.firstname, undefined);
  assert.equal(one.lastname, "Curie");
}, { gaps: ["projection"] });

const MEDIA = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  RETURN_MEDIA_AS_URL: true,
  EXTENDED_MEDIA_INFO: ["content_type", "name", "length"],
  DOMAIN: { files: { schema: { name: { type: "string" }, data: { type: "media" } } } },
};

scenario(
  "client: media upload (Blob, File) and download (stream, byte range)",
  MEDIA,
  async (_, running) => {
    const api = createClient({ baseUrl: running.url });
    const files = api.resource("files");
    const bytes = new Uint8Array(70_000).map((_, i) => i % 251);
    const file = new File([bytes], "report.bin", { type: "application/x-test" });
    const written = await files.create({ name: "report", data: file });
    const doc = await files.get(written._id);
    const data = doc.data as { file: string; content_type: string; name: string; length: number };
    assert.equal(data.content_type, "application/x-test");
    assert.equal(data.name, "report.bin");
    assert.equal(data.length, bytes.length);

    const whole = await api.download(data.file);
    assert.equal(whole.status, 200);
    assert.equal(whole.length, bytes.length);
    assert.equal(whole.filename, "report.bin");
    let received = 0;
    for await (const chunk of whole.stream) received += chunk.length;
    assert.equal(received, bytes.length);

    const part = await api.download(data.file, { range: { start: 100, end: 199 } });
    assert.equal(part.status, 206);
    assert.deepEqual(part.range, { start: 100, end: 199, size: bytes.length });
    assert.deepEqual(await part.bytes(), bytes.slice(100, 200));
    const tail = await api.download(data.file, { range: { suffix: 10 } });
    assert.deepEqual(await tail.bytes(), bytes.slice(-10));
    // By file id too.
    const id = data.file.split("/").pop()!;
    assert.equal((await (await api.download(id, { range: { start: 0, end: 0 } })).bytes())[0], 0);

    // A plain Blob replaces the file through PATCH (multipart, If-Match from the read).
    await files.patch(doc, { data: new Blob([new Uint8Array([7, 8, 9])]) });
    const after = (await files.get(written._id)).data as { file: string };
    assert.deepEqual(await (await api.download(after.file)).bytes(), new Uint8Array([7, 8, 9]));
    await assert.rejects(api.download("0123456789abcdef01234567"), NotFoundError);
  },
);

scenario("client: the change feed resumes with Last-Event-ID after a dropped connection", {
  ...SHIPPED,
  CHANGES_HEARTBEAT_MS: 1000,
}, async (_, running) => {
  const people = createClient<Api>({ baseUrl: running.url, paths }).resource("people");
  const controller = new AbortController();
  const feed = people.changes({
    documents: true,
    signal: controller.signal,
    reconnectDelayMs: 300,
  });
  const [ready] = await take(feed, 1);
  assert.equal(ready.type, "ready");
  const a = await people.create({ lastname: "Alpha" });
  const [insertA] = await take(feed, 1);
  assert.equal(insertA.type, "insert");
  assert.equal(insertA.documentId, a._id);
  assert.equal(insertA.document?.lastname, "Alpha");

  // The service drops every feed; while the client waits to reconnect, B is written.
  running.service.endStreams();
  const nextEvents = take(feed, 2);
  const b = await people.create({ lastname: "Beta" });
  const [resumed, insertB] = await nextEvents;
  await people.patch(b._id, { firstname: "B" });
  const rest = await take(feed, 1);
  assert.equal(resumed.type, "ready");
  assert.equal(resumed.data.resumed, true, "the feed was resumed, not opened afresh");
  assert.equal(insertB.type, "insert");
  assert.equal(insertB.documentId, b._id, "the change made while disconnected is replayed");
  assert.equal(rest[0].type, "update");
  controller.abort();
  await assert.rejects(feed.next(), AbortedError);
});

const AUTH = {
  AUTH_SCHEMES: ["basic", "token", "hmac", "jwt"],
  AUTH_JWT: { secret: "a-long-shared-secret-of-32-chars-or-more!" },
  AUTH_USERS: [{
    username: "root",
    password: SECRET_HASH,
    roles: ["admin"],
    token: "root-token-0123456789",
    secret: "root-secret-0123456789",
  }],
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: { notes: { schema: { text: { type: "string" } } } },
};

scenario("client: Basic, bearer token, JWT and HMAC credentials", AUTH, async (_, running) => {
  const anonymous = createClient({ baseUrl: running.url }).resource("notes");
  await assert.rejects(anonymous.list(), AuthError);
  const jwt = await new SignJWT({ roles: ["admin"] }).setProtectedHeader({ alg: "HS256" })
    .setSubject("u1").setExpirationTime("10m")
    .sign(new TextEncoder().encode(AUTH.AUTH_JWT.secret));
  const schemes = {
    basic: { basic: { username: "root", password: "secret" } },
    token: { bearer: "root-token-0123456789" },
    jwt: { bearer: () => Promise.resolve(jwt) },
    hmac: { hmac: { username: "root", secret: "root-secret-0123456789" } },
  } as const;
  for (const [name, auth] of Object.entries(schemes)) {
    const notes = createClient({ baseUrl: running.url, auth }).resource("notes");
    const note = await notes.create({ text: name });
    await notes.patch(note._id, { text: `${name}!` });
    assert.equal((await notes.get(note._id)).text, `${name}!`, name);
    // Identical requests in one second sign alike: the second must not be refused as a replay.
    await notes.list({ where: { text: "x" } });
    await notes.list({ where: { text: "x" } });
    await notes.delete(note._id);
  }
  const wrong = createClient({
    baseUrl: running.url,
    auth: { hmac: { username: "root", secret: "nope-nope-nope-nope" } },
  });
  await assert.rejects(wrong.resource("notes").list(), AuthError);
});

scenario("client: 429 is retried after Retry-After, within bounds", {
  RATE_LIMIT_GET: [1, 1],
  DOMAIN: { notes: {} },
}, async (_, running) => {
  const notes = createClient({ baseUrl: running.url }).resource("notes");
  await notes.list();
  const started = Date.now();
  await notes.list(); // refused with Retry-After, then served after the wait
  assert.ok(Date.now() - started >= 200, "the client waited for the window");
  const impatient = createClient({ baseUrl: running.url, retry: { retries: 0 } });
  await impatient.resource("notes").list().catch(() => {});
  const error = await impatient.resource("notes").list().catch((e) => e);
  assert.ok(error instanceof RateLimitError);
  assert.equal(error.status, 429);
  assert.ok(error.retryAfterMs !== null && error.retryAfterMs <= 1000);
  const capped = createClient({ baseUrl: running.url, retry: { maxDelayMs: 10 } });
  await capped.resource("notes").list().catch(() => {});
  await assert.rejects(capped.resource("notes").list(), RateLimitError);
});

scenario("client: AbortSignal on calls and feeds", SHIPPED, async (_, running) => {
  const api = createClient<Api>({ baseUrl: running.url, paths });
  const aborted = AbortSignal.abort(new Error("stop"));
  const error = await api.resource("people").list({ signal: aborted }).catch((e) => e);
  assert.ok(error instanceof AbortedError);
  assert.equal((error.cause as Error).message, "stop");
  await assert.rejects(
    api.resource("people").create({ lastname: "X" }, { signal: aborted }),
    AbortedError,
  );
  await assert.rejects(api.download("x", { signal: aborted }), AbortedError);
  const controller = new AbortController();
  const feed = api.resource("people").changes({ signal: controller.signal });
  assert.equal((await feed.next()).value?.type, "ready");
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(feed.next(), AbortedError);
});

Deno.test("client: an unreachable service is a NetworkError with its cause", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const api = createClient({ baseUrl: `http://127.0.0.1:${port}/` });
  const error = await api.resource("people").list().catch((e) => e);
  assert.ok(error instanceof NetworkError);
  assert.ok(error instanceof ClientError);
  assert.ok(error.cause instanceof Error);
  assert.match(error.message, /could not be reached/);
  // Feeds give up after their bounded reconnects, with the same error.
  const feed = api.resource("people").changes({ reconnectDelayMs: 1, maxReconnects: 2 });
  await assert.rejects(feed.next(), NetworkError);
});

// 503 with Retry-After (too many feeds) is retried too: a one-feed service refuses the second
// feed until the first closes.
scenario("client: 503 with Retry-After is retried", {
  ...SHIPPED,
  CHANGES_MAX_CONNECTIONS: 1,
}, async (_, running) => {
  const people = createClient<Api>({ baseUrl: running.url, paths }).resource("people");
  const first = people.changes();
  assert.equal((await first.next()).value?.type, "ready");
  const second = people.changes();
  const opened = second.next();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await first.return(undefined);
  assert.equal((await opened).value?.type, "ready");
  await second.return(undefined);
});

void STORES;
