/** The example application (config/app.ts): its hooks over HTTP, with config/settings.json. */
import assert from "node:assert/strict";
import { BLOCKED_LASTNAMES, registerAuditTrail, registerExampleHooks } from "../../config/app.ts";
import { Events } from "../../src/mod.ts";
import { loadSettingsFile } from "../../src/settings/load.ts";
import { scenario } from "../support/harness.ts";
import { memoryLogger } from "../events/record.ts";
import type { Json } from "../support/client.ts";

const { settings } = await loadSettingsFile(
  new URL("../../config/settings.json", import.meta.url).pathname,
);
const audit = memoryLogger();
const events = registerExampleHooks(new Events(), audit.logger);

scenario(
  "example: X-Owner filters works (dynamic lookup); a bad id is refused",
  settings,
  async (api) => {
    const ada = await api.create("people", { lastname: "Lovelace" });
    const bob = await api.create("people", { lastname: "Babbage" });
    await api.create("works", { title: "Notes", owner: ada._id });
    await api.create("works", { title: "Engine", owner: bob._id });
    const all = await api.get("works?sort=title");
    assert.deepEqual(all.body._items.map((w: Json) => w.title), ["Engine", "Notes"]);
    const adas = await api.get("works", { "x-owner": ada._id });
    assert.deepEqual(adas.body._items.map((w: Json) => w.title), ["Notes"]);
    const bad = await api.get("works", { "x-owner": "nope" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body._error.message, "X-Owner must be a person id");
  },
  { events },
);

scenario(
  "example: reserved lastnames and deleting all people are vetoed with 403",
  settings,
  async (api) => {
    assert.ok(BLOCKED_LASTNAMES.has("root"));
    const res = await api.post("people", [{ lastname: "Hopper" }, { lastname: "Root" }]);
    assert.equal(res.status, 403);
    assert.equal(res.body._error.message, "lastname Root is reserved");
    assert.equal((await api.get("people")).body._meta.total, 0);
    await api.create("people", { lastname: "Hopper" });
    assert.equal((await api.delete("people")).status, 403);
    assert.equal((await api.get("people")).body._meta.total, 1);
  },
  { events },
);

scenario(
  "example: fetched people carry a fullname; stored documents are audited",
  settings,
  async (api) => {
    audit.clear();
    const ada = await api.create("people", { firstname: "Ada", lastname: "Lovelace" });
    const byId = await api.get(`people/${ada._id}`);
    assert.equal(byId.body.fullname, "Ada Lovelace");
    assert.equal(byId.headers.get("etag"), `"${ada._etag}"`);
    const byLastname = await api.get("people/Lovelace");
    assert.equal(byLastname.body.fullname, "Ada Lovelace");
    const stored = audit.records.filter((r) => r.resource !== undefined);
    assert.deepEqual(stored.map((r) => r.message), ["stored 1 document(s) in people"]);
  },
  { events, logger: audit.logger },
);

scenario(
  "example: an audit trail in the internal resource, written in-process",
  settings,
  async (api, running) => {
    registerAuditTrail(running.service);
    const ada = await api.create("people", { lastname: "Lovelace" });
    await api.post("works", [{ title: "Notes", owner: ada._id }, { title: "Ode", owner: ada._id }]);
    assert.equal((await api.get("audit")).status, 404, "internal: not served over HTTP");
    const trail = await running.service.data.get("audit", { query: { sort: "_id" } });
    assert.deepEqual(
      trail.body._items.map((e: Json) => [e.resource, e.action]),
      [["people", "create"], ["works", "create"], ["works", "create"]],
    );
    assert.equal(trail.body._items[0].document, ada._id);
  },
);
