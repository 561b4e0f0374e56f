/** Reading: conditional GET (If-None-Match, If-Modified-Since) and cache headers. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    people: { schema: { name: { type: "string" } } },
    cached: {
      cache_control: "max-age=20, must-revalidate",
      cache_expires: 20,
      datasource: { source: "people" },
      schema: { name: { type: "string" } },
    },
  },
};

async function seed(api: Client): Promise<{ id: string; etag: string; updated: string }> {
  const doc = await api.create("people", { name: "ann" });
  return { id: doc._id, etag: doc._etag, updated: doc._updated };
}

const shift = (httpDate: string, seconds: number) =>
  new Date(Date.parse(httpDate) + seconds * 1000).toUTCString();

scenario("item GET carries ETag and Last-Modified", SETTINGS, async (api) => {
  const { id, etag, updated } = await seed(api);
  const res = await api.get(`people/${id}`);
  assert.equal(res.headers.get("etag"), `"${etag}"`);
  assert.equal(res.headers.get("last-modified"), updated);
});

scenario("If-None-Match: a matching ETag answers 304 without a body", SETTINGS, async (api) => {
  const { id, etag } = await seed(api);
  for (const header of [`"${etag}"`, `W/"${etag}"`, `"other", "${etag}"`, "*"]) {
    const res = await api.get(`people/${id}`, { "if-none-match": header });
    assert.equal(res.status, 304, header);
    assert.equal(res.text, "");
    assert.equal(res.headers.get("etag"), `"${etag}"`);
  }
  const head = await api.head(`people/${id}`, { "if-none-match": `"${etag}"` });
  assert.equal(head.status, 304);
  const other = await api.get(`people/${id}`, { "if-none-match": '"0000"' });
  assert.equal(other.status, 200);
  assert.equal(other.body.name, "ann");
});

scenario(
  "If-None-Match: an edit changes the ETag, so the old one gets 200",
  SETTINGS,
  async (api) => {
    const { id, etag } = await seed(api);
    const patched = await api.patch(`people/${id}`, { name: "anna" }, { "if-match": etag });
    assert.equal(patched.status, 200, patched.text);
    const res = await api.get(`people/${id}`, { "if-none-match": `"${etag}"` });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, "anna");
    assert.equal(res.headers.get("etag"), `"${patched.body._etag}"`);
  },
);

scenario(
  "If-Modified-Since: one-second resolution against Last-Modified",
  SETTINGS,
  async (api) => {
    const { id, updated } = await seed(api);
    const same = await api.get(`people/${id}`, { "if-modified-since": updated });
    assert.equal(same.status, 304);
    assert.equal(same.text, "");
    const later = await api.get(`people/${id}`, { "if-modified-since": shift(updated, 5) });
    assert.equal(later.status, 304);
    const earlier = await api.get(`people/${id}`, { "if-modified-since": shift(updated, -1) });
    assert.equal(earlier.status, 200);
    assert.equal(earlier.body._id, id);
    const garbage = await api.get(`people/${id}`, { "if-modified-since": "yesterday" });
    assert.equal(garbage.status, 200);
  },
);

scenario("If-None-Match wins over If-Modified-Since", SETTINGS, async (api) => {
  const { id, updated } = await seed(api);
  const res = await api.get(`people/${id}`, {
    "if-none-match": '"stale"',
    "if-modified-since": shift(updated, 60),
  });
  assert.equal(res.status, 200);
});

scenario(
  "IF_MATCH false: no ETag, If-Modified-Since still works",
  { ...SETTINGS, IF_MATCH: false },
  async (api) => {
    const doc = await api.create("people", { name: "ann" });
    const res = await api.get(`people/${doc._id}`);
    assert.equal(res.headers.get("etag"), null);
    assert.equal(res.body._etag, undefined);
    const inm = await api.get(`people/${doc._id}`, { "if-none-match": "*" });
    assert.equal(inm.status, 200);
    const ims = await api.get(`people/${doc._id}`, { "if-modified-since": doc._updated });
    assert.equal(ims.status, 304);
  },
);

scenario(
  "cache_control and cache_expires set Cache-Control and Expires on GET",
  SETTINGS,
  async (api) => {
    const { id, etag } = await seed(api);
    for (const path of ["cached", `cached/${id}`]) {
      const before = Date.now();
      const res = await api.get(path);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("cache-control"), "max-age=20, must-revalidate");
      const expires = Date.parse(res.headers.get("expires") ?? "");
      assert.ok(expires >= Math.floor(before / 1000) * 1000 + 20_000, `${path}: Expires too early`);
      assert.ok(expires <= Date.now() + 21_000, `${path}: Expires too late`);
    }
    const notModified = await api.get(`cached/${id}`, { "if-none-match": `"${etag}"` });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.get("cache-control"), "max-age=20, must-revalidate");
    const plain = await api.get("people");
    assert.equal(plain.headers.get("cache-control"), null);
    assert.equal(plain.headers.get("expires"), null);
  },
);

scenario("CACHE_CONTROL and CACHE_EXPIRES are the defaults for every resource", {
  ...SETTINGS,
  CACHE_CONTROL: "no-cache",
  CACHE_EXPIRES: 5,
}, async (api) => {
  const { id } = await seed(api);
  const res = await api.get(`people/${id}`);
  assert.equal(res.headers.get("cache-control"), "no-cache");
  assert.ok(res.headers.get("expires"));
  const cached = await api.get("cached");
  assert.equal(cached.headers.get("cache-control"), "max-age=20, must-revalidate");
});

scenario("cache headers are not sent on writes", SETTINGS, async (api) => {
  const res = await api.post("cached", { name: "bob" });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("cache-control"), null);
  assert.equal(res.headers.get("expires"), null);
});
