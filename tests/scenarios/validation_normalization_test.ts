/**
 * Cerberus's normalization rules `rename`, `purge_unknown`, `require_all` and `coerce`
 * through HTTP: POST, bulk POST, PUT and PATCH (dotted keys included) store what Cerberus's
 * normalized document would hold, read-only and meta fields cannot be reached through a
 * rename, coercers (built-in and registered) run first and report failures in Cerberus's
 * words, the API description says what requests may send, and malformed rules stop start-up.
 */
import assert from "node:assert/strict";
import type { Coercer, CustomRule, DefaultSetter } from "../../src/mod.ts";
import { sharedService } from "../support/harness.ts";
import { assertCreated, assertInvalid } from "../support/assertions.ts";
import { settingsProblems } from "../support/settings.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT"],
  DOMAIN: {
    contacts: {
      schema: {
        mail: { rename: "email" },
        email: { type: "string", regex: "[^@]+@[^@]+" },
        nick: { rename: "name" },
        name: { type: "string" },
        locked: { rename: "level" },
        level: { type: "integer", readonly: true, default: 1 },
        stamp: { rename: "_created" },
        address: {
          type: "dict",
          purge_unknown: true,
          schema: {
            town: { rename: "city" },
            city: { type: "string", required: true },
            geo: { type: "dict", schema: { lat: { type: "float" } } },
            open: { type: "dict", allow_unknown: true, schema: { a: { type: "integer" } } },
            kept: { type: "dict", purge_unknown: false, schema: { b: { type: "integer" } } },
          },
        },
        rows: {
          type: "list",
          schema: {
            type: "dict",
            purge_unknown: true,
            schema: { sku: { type: "string" }, n: { rename: "qty" }, qty: { type: "integer" } },
          },
        },
      },
    },
    forms: {
      schema: {
        title: { type: "string" },
        parts: {
          type: "dict",
          require_all: true,
          schema: {
            a: { type: "integer" },
            b: { type: "integer" },
            c: { type: "integer", required: false },
            old: { rename: "b" },
            inner: {
              type: "dict",
              schema: { x: { type: "string" }, y: { type: "string", required: false } },
            },
          },
        },
      },
    },
  },
};

const shared = sharedService("validation: rename, purge_unknown, require_all", SETTINGS);

shared("rename: the value is stored and validated under the new name", async (api) => {
  const doc = await assertCreated(api, "contacts", { mail: "a@x.org", nick: "Ann" });
  const read = (await api.get(`contacts/${doc._id}`)).body;
  assert.equal(read.email, "a@x.org");
  assert.equal(read.name, "Ann");
  assert.equal(read.mail, undefined);
  assert.equal(read.nick, undefined);
  // The new name's rules apply to the renamed value.
  assertInvalid(await api.post("contacts", { mail: "nobody" }), {
    email: "value does not match regex '[^@]+@[^@]+'",
  });
  // Sent under both names, the renamed value wins (as in Cerberus).
  const both = await assertCreated(api, "contacts", { name: "Bob", nick: "Rob" });
  assert.equal((await api.get(`contacts/${both._id}`)).body.name, "Rob");
});

shared("rename cannot reach a read-only or meta field", async (api) => {
  assertInvalid(await api.post("contacts", { locked: 5 }), { level: "field is read-only" });
  assertInvalid(await api.post("contacts", { stamp: "x" }), { _created: "field is read-only" });
  const doc = await assertCreated(api, "contacts", { name: "Cy" });
  const path = `contacts/${doc._id}`;
  assertInvalid(await api.patch(path, { locked: 9 }, { "if-match": doc._etag }), {
    level: "field is read-only",
  });
  assert.equal((await api.get(path)).body.level, 1);
});

shared("purge_unknown: unknown names of the dict and of dicts below are dropped", async (api) => {
  const doc = await assertCreated(api, "contacts", {
    name: "Di",
    address: {
      town: "Lyon",
      floor: 3,
      geo: { lat: 45.7, alt: 170 },
      open: { a: 1, extra: true },
      kept: { b: 2 },
    },
    rows: [{ sku: "A", n: 2, colour: "red" }, { sku: "B", qty: 1 }],
  });
  const read = (await api.get(`contacts/${doc._id}`)).body;
  assert.deepEqual(read.address, {
    city: "Lyon",
    geo: { lat: 45.7 },
    open: { a: 1, extra: true },
    kept: { b: 2 },
  });
  assert.deepEqual(read.rows, [{ sku: "A", qty: 2 }, { sku: "B", qty: 1 }]);
  // A dict that says purge_unknown: false refuses unknown names again.
  assertInvalid(
    await api.post("contacts", { address: { city: "Oslo", kept: { b: 1, c: 2 } } }),
    { address: { kept: { c: "unknown field" } } },
  );
  // Unknown names at the top level (no purge_unknown there) are still refused.
  assertInvalid(await api.post("contacts", { name: "Ed", shoe: 42 }), { shoe: "unknown field" });
  // Hostile names are refused before any purge, as everywhere.
  assertInvalid(await api.post("contacts", { address: { city: "A", $where: 1 } }), {
    address: { $where: "invalid field name" },
  });
  assertInvalid(await api.post("contacts", JSON.parse('{"address":{"city":"A","__proto__":{}}}')), {
    // An own "__proto__" key, not a prototype (a literal would set the prototype).
    address: JSON.parse('{"__proto__":"field name not allowed"}'),
  });
  // Purged names do not make a required field present.
  assertInvalid(await api.post("contacts", { address: { floor: 2 } }), {
    address: { city: "required field" },
  });
});

shared("PATCH: renamed keys, dotted ones too; purged keys change nothing", async (api) => {
  const doc = await assertCreated(api, "contacts", { name: "Fay", address: { city: "Rome" } });
  const path = `contacts/${doc._id}`;
  let etag = doc._etag as string;
  const patch = async (body: unknown) => {
    const res = await api.patch(path, body, { "if-match": etag });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    etag = res.body._etag;
    return (await api.get(path)).body;
  };
  let read = await patch({ mail: "f@x.org", "address.town": "Pisa" });
  assert.equal(read.email, "f@x.org");
  assert.equal(read.mail, undefined);
  assert.deepEqual(read.address, { city: "Pisa" });
  read = await patch({ "address.floor": 4, "address.geo": { lat: 1, alt: 2 } });
  assert.deepEqual(read.address, { city: "Pisa", geo: { lat: 1 } });
  read = await patch({ address: { town: "Bari", floor: 1 } });
  assert.deepEqual(read.address, { city: "Bari", geo: { lat: 1 } });
  assertInvalid(await api.patch(path, { mail: "bad" }, { "if-match": etag }), {
    email: "value does not match regex '[^@]+@[^@]+'",
  });
});

shared("PUT renames and purges as POST does", async (api) => {
  const doc = await assertCreated(api, "contacts", { name: "Gil" });
  const path = `contacts/${doc._id}`;
  const put = await api.put(path, { nick: "Gill", address: { town: "Nice", x: 1 } }, {
    "if-match": doc._etag,
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const read = (await api.get(path)).body;
  assert.equal(read.name, "Gill");
  assert.deepEqual(read.address, { city: "Nice" });
});

shared("bulk POST: each document renamed and purged", async (api) => {
  const res = await api.post("contacts", [
    { mail: "h@x.org", address: { town: "Graz", z: 0 } },
    { nick: "Ida" },
  ]);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const [first, second] = res.body._items as Array<{ _id: string }>;
  const one = (await api.get(`contacts/${first._id}`)).body;
  assert.equal(one.email, "h@x.org");
  assert.deepEqual(one.address, { city: "Graz" });
  assert.equal((await api.get(`contacts/${second._id}`)).body.name, "Ida");
});

shared("require_all: every field of the dict and of dicts below is required", async (api) => {
  assertInvalid(await api.post("forms", { parts: {} }), {
    parts: { a: "required field", b: "required field", inner: "required field" },
  });
  assertInvalid(await api.post("forms", { parts: { a: 1, b: 2, inner: {} } }), {
    parts: { inner: { x: "required field" } },
  });
  // `required: false` opts out; a renamed field is not required (its value moves on).
  const doc = await assertCreated(api, "forms", { parts: { a: 1, old: 2, inner: { x: "x" } } });
  const path = `forms/${doc._id}`;
  assert.deepEqual((await api.get(path)).body.parts, { a: 1, b: 2, inner: { x: "x" } });
  // The top level has no require_all, and PATCH names only what changes.
  const patch = await api.patch(path, { "parts.a": 5 }, { "if-match": doc._etag });
  assert.equal(patch.status, 200, JSON.stringify(patch.body));
  const put = await api.put(path, { title: "t", parts: { a: 1 } }, {
    "if-match": patch.body._etag,
  });
  assertInvalid(put, { parts: { b: "required field", inner: "required field" } });
});

shared("the API description: renamed fields only in requests, purging dicts open", async (api) => {
  const res = await api.get("openapi.json");
  assert.equal(res.status, 200);
  const schemas = res.body.components.schemas;
  const item = schemas["contacts.item"].properties;
  assert.ok(item.email && !item.mail, JSON.stringify(Object.keys(item)));
  for (const form of ["contacts.input", "contacts.patch"]) {
    const props = schemas[form].properties;
    assert.deepEqual(props.mail, { writeOnly: true, description: "Stored as 'email'." }, form);
    // A purging dict accepts unknown names (and drops them); the others refuse them.
    assert.equal(props.address.additionalProperties, undefined, form);
    assert.equal(props.address.properties.kept.additionalProperties, false, form);
  }
});

const coercers: Record<string, Coercer> = {
  lower: (v) => typeof v === "string" ? v.toLowerCase() : v,
  positive: (v) => {
    if (typeof v !== "number" || v <= 0) throw new Error(`${v} is not positive`);
    return v;
  },
  nothing: () => undefined,
  parse: (v) => typeof v === "string" ? JSON.parse(v) : v,
  dotted: (v) => `${v}.x`,
};

const defaultSetters: Record<string, DefaultSetter> = {
  slugify: (doc) => `${doc.code ?? "item"}-${doc.qty ?? 0}`,
  stamp: (doc) => {
    if (doc.title === "bad") throw new Error("no stamp for a bad title");
    return doc.title === "none" ? undefined : String(doc.title ?? "").length;
  },
  extra: (doc) => doc.title === "evil" ? JSON.parse('{"__proto__": {"polluted": 1}}') : undefined,
};

const rules: Record<string, CustomRule> = {
  even_check: { check: (v) => typeof v === "number" && v % 2 !== 0 ? "must be even" : null },
};

const COERCING = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    items: {
      schema: {
        qty: { type: "integer", coerce: "int" },
        price: { type: "float", coerce: "float", nullable: true },
        code: { type: "string", coerce: "lower", regex: "[a-z]+" },
        count: { type: "integer", coerce: ["int", "positive"] },
        broken: { type: "string", coerce: "nothing" },
        box: { type: "dict", schema: { side: { type: "integer", coerce: "int", default: "7" } } },
        sizes: { type: "list", schema: { type: "integer", coerce: "int" } },
        meta: { type: "dict", coerce: "parse", allow_unknown: true },
      },
    },
    setters: {
      schema: {
        title: { type: "string" },
        code: { type: "string", coerce: "lower" },
        qty: { type: "integer", default: 3 },
        slug: { type: "string", default_setter: "slugify" },
        stamp: { type: "integer", default_setter: "stamp" },
        pair: { type: "integer", check_with: "even_check" },
        extra: { type: "dict", default_setter: "extra", allow_unknown: true },
      },
    },
    handled: {
      schema: {
        Title: { rename_handler: "lower" },
        title: { type: "string" },
        counts: {
          type: "dict",
          allow_unknown: { type: "integer", rename_handler: "lower", coerce: "int" },
          schema: { a: { type: "integer", coerce: "int" } },
        },
        Weird: { rename_handler: "positive" },
        Dot: { rename_handler: "dotted" },
      },
    },
  },
};

const coercing = sharedService("validation: coerce, default_setter, check_with", COERCING, {
  extensions: { coercers, defaultSetters, rules },
});

coercing("default_setter: computed after defaults and coercion, from the level", async (api) => {
  const doc = await assertCreated(api, "setters", { title: "Hello", code: "AB" });
  const read = (await api.get(`setters/${doc._id}`)).body;
  assert.equal(read.slug, "ab-3");
  assert.equal(read.stamp, 5);
  // A value sent wins; a setter's failure is the field's issue.
  const sent = await assertCreated(api, "setters", { title: "x", slug: "mine" });
  assert.equal((await api.get(`setters/${sent._id}`)).body.slug, "mine");
  assertInvalid(await api.post("setters", { title: "bad" }), {
    stamp: "default value for 'stamp' cannot be set: no stamp for a bad title",
  });
  // A setter's value gets the checks of a client's names too.
  assertInvalid(await api.post("setters", { title: "evil" }), {
    extra: "default value for 'extra' cannot be set: " +
      "the value holds a field name a document may not have",
  });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  // PATCH (normalize_on_patch): a field the stored document lacks gets its setter's value.
  const bare = await assertCreated(api, "setters", { title: "none" });
  const path = `setters/${bare._id}`;
  assert.equal((await api.get(path)).body.stamp, undefined);
  const patched = await api.patch(path, { title: "later" }, { "if-match": bare._etag });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal((await api.get(path)).body.stamp, 5);
});

coercing("rename_handler: a field's name, or every unknown name, through coercers", async (api) => {
  const doc = await assertCreated(api, "handled", {
    Title: "Hi",
    counts: { A: "3", B: "4", c: 5 },
  });
  const read = (await api.get(`handled/${doc._id}`)).body;
  assert.equal(read.title, "Hi");
  assert.equal(read.Title, undefined);
  assert.deepEqual(read.counts, { a: 3, b: 4, c: 5 });
  // A failing handler, or one making a name no client could send, keeps the name sent.
  assertInvalid(await api.post("handled", { Weird: 1, Dot: 2 }), {
    Weird: "field 'Weird' cannot be renamed: Weird is not positive",
    Dot: "field 'Dot' cannot be renamed: 'Dot.x' is no field name",
  });
  const patch = await api.patch(`handled/${doc._id}`, { "counts.D": "7" }, {
    "if-match": doc._etag,
  });
  assert.equal(patch.status, 200, JSON.stringify(patch.body));
  assert.deepEqual((await api.get(`handled/${doc._id}`)).body.counts, { a: 3, b: 4, c: 5, d: 7 });
  const schemas = (await api.get("openapi.json")).body.components.schemas;
  assert.deepEqual(schemas["handled.input"].properties.Title, {
    writeOnly: true,
    description: "Renamed by 'lower' first.",
  });
  assert.equal(schemas["handled.item"].properties.Title, undefined);
});

coercing("check_with: a custom rule named as Cerberus's check", async (api) => {
  await assertCreated(api, "setters", { title: "t", pair: 4 });
  assertInvalid(await api.post("setters", { title: "t", pair: 3 }), { pair: "must be even" });
});

coercing("coerce: built-in int and float, a registered coercer, a chain", async (api) => {
  const doc = await assertCreated(api, "items", {
    qty: "12",
    price: "2.50",
    code: "ABC",
    count: 3.9,
    box: { side: " 4 " },
    sizes: ["1", 2, "3"],
  });
  const read = (await api.get(`items/${doc._id}`)).body;
  assert.equal(read.qty, 12);
  assert.equal(read.price, 2.5);
  assert.equal(read.code, "abc");
  assert.equal(read.count, 3);
  assert.deepEqual(read.box, { side: 4 });
  assert.deepEqual(read.sizes, [1, 2, 3]);
  // A default goes through the coercer too (Cerberus: defaults, then coercion).
  const boxed = await assertCreated(api, "items", { box: {} });
  assert.deepEqual((await api.get(`items/${boxed._id}`)).body.box, { side: 7 });
  // PATCH coerces what it sends.
  const patched = await api.patch(`items/${doc._id}`, { qty: "40", "box.side": "5" }, {
    "if-match": doc._etag,
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  const after = (await api.get(`items/${doc._id}`)).body;
  assert.equal(after.qty, 40);
  assert.deepEqual(after.box, { side: 5 });
});

coercing("coerce: a failure keeps the value and says why, in Cerberus's words", async (api) => {
  assertInvalid(await api.post("items", { qty: "twelve" }), {
    qty: "field 'qty' cannot be coerced: invalid literal for int() with base 10: 'twelve'; " +
      "must be of integer type",
  });
  assertInvalid(await api.post("items", { price: "x1" }), {
    price: "field 'price' cannot be coerced: could not convert string to float: 'x1'; " +
      "must be of float type",
  });
  // The chain stops at its first failure.
  assertInvalid(await api.post("items", { count: "-2" }), {
    count: "field 'count' cannot be coerced: -2 is not positive",
  });
  assertInvalid(await api.post("items", { sizes: [1, "x"] }), {
    sizes: {
      "1": "field '1' cannot be coerced: invalid literal for int() with base 10: 'x'; " +
        "must be of integer type",
    },
  });
  assertInvalid(await api.post("items", { broken: "a" }), {
    broken: "field 'broken' cannot be coerced: coercer 'nothing' returned no value",
  });
  // The API description: requests may send any value; answers hold the coerced type.
  const schemas = (await api.get("openapi.json")).body.components.schemas;
  assert.deepEqual(schemas["items.input"].properties.count, {
    description: "Coerced by 'int' then 'positive' before the field's rules apply.",
  });
  assert.equal(schemas["items.item"].properties.qty.type, "integer");
  // What a coercer builds from a client's value gets the checks of the client's own names.
  const meta = await assertCreated(api, "items", { meta: '{"a": {"b": 1}}' });
  assert.deepEqual((await api.get(`items/${meta._id}`)).body.meta, { a: { b: 1 } });
  for (const text of ['{"$where": "1"}', '{"a": {"__proto__": {"x": 1}}}', '{"a.b": 1}']) {
    const res = await api.post("items", { meta: text });
    assert.equal(res.status, 422, text);
    assert.match(
      res.body._issues.meta,
      /^field 'meta' cannot be coerced: the value holds a field name a document may not have/,
    );
  }
  assert.equal(({} as Record<string, unknown>).x, undefined);
  // null in a nullable field is not a failure.
  const doc = await assertCreated(api, "items", { price: null });
  assert.equal((await api.get(`items/${doc._id}`)).body.price, null);
});

Deno.test("malformed normalization rules stop start-up, every problem listed", () => {
  const settings = {
    STORE: "embedded",
    DOMAIN: {
      bad: {
        schema: {
          a: { rename: "" },
          b: { rename: "x.y" },
          c: { rename: "$set" },
          d: { rename: "__proto__" },
          e: { rename: "f" },
          g: { rename: "f" },
          f: { rename: "h" },
          h: { type: "string" },
          l: { type: "list", schema: { rename: "m" } },
          n: { type: "dict", purge_unknown: "yes", require_all: 1, schema: {} },
          o: { anyof: [{ type: "dict", schema: {}, purge_unknown: true }] },
          p: { type: "integer", coerce: "itn" },
          q: { type: "integer", coerce: [] },
          r: { type: "dict", valuesrules: { type: "integer", coerce: "int" } },
          s: { type: "string", default_setter: "nowhere" },
          t: { type: "string", default: "a", default_setter: "now" },
          u: { type: "string", check_with: "nothing" },
          v: { rename: "w", rename_handler: "int" },
          w: { type: "list", schema: { type: "string", rename_handler: "int" } },
          x: { rename_handler: "lowr" },
          y: {
            type: "dict",
            allow_unknown: { type: "dict", schema: { q: { rename_handler: "int" } } },
          },
        },
      },
    },
  };
  const problems = settingsProblems(settings, {
    extensions: { defaultSetters: { now: () => new Date().toISOString() } },
  }).join("\n");
  for (
    const line of [
      "DOMAIN.bad.schema.a.rename: must be a field name",
      "DOMAIN.bad.schema.b.rename: must be a field name",
      "DOMAIN.bad.schema.c.rename: must be a field name",
      "DOMAIN.bad.schema.d.rename: must be a field name",
      "DOMAIN.bad.schema.g.rename: 'e' is renamed to 'f' too",
      "DOMAIN.bad.schema.e.rename: 'f' is renamed in turn (to 'h')",
      "DOMAIN.bad.schema.l.schema.rename: only a dict's fields can be renamed",
      "DOMAIN.bad.schema.n.purge_unknown: must be a boolean",
      "DOMAIN.bad.schema.n.require_all: must be a boolean",
      "DOMAIN.bad.schema.o.anyof[0].purge_unknown: not allowed inside rule branches",
      "DOMAIN.bad.schema.p.coerce: unknown coercer 'itn' (did you mean int?); " +
      "register it in extensions.coercers",
      "DOMAIN.bad.schema.q.coerce: must be a coercer's name or a list of names",
      "DOMAIN.bad.schema.r.valuesrules.coerce: not allowed inside rule branches",
      "DOMAIN.bad.schema.s.default_setter: unknown default setter 'nowhere' (did you mean now?); " +
      "register it in extensions.defaultSetters",
      "DOMAIN.bad.schema.t.default_setter: 'default' and 'default_setter' exclude each other",
      "DOMAIN.bad.schema.u.check_with: unknown check 'nothing'; register it in extensions.rules",
      "DOMAIN.bad.schema.v.rename_handler: 'rename' and 'rename_handler' exclude each other",
      "DOMAIN.bad.schema.w.schema.rename_handler: only a dict's fields can be renamed",
      "DOMAIN.bad.schema.x.rename_handler: unknown coercer 'lowr'",
      "DOMAIN.bad.schema.y.allow_unknown.schema.q.rename_handler: not allowed inside rule branches",
    ]
  ) assert.ok(problems.includes(line), `missing "${line}" in:\n${problems}`);
});
