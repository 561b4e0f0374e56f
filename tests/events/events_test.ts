/** The event bus on its own: order, forms, async callbacks, failures, registration. */
import assert from "node:assert/strict";
import { EVENTS, Events, RESOURCE_EVENTS, resourceEvent } from "../../src/events.ts";

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("emitFor raises the generic form with the resource, then the resource form", async () => {
  const events = new Events();
  const seen: unknown[][] = [];
  events.on("on_insert", (...args: unknown[]) => {
    seen.push(["generic", ...args]);
  });
  events.on("on_insert_people", (...args: unknown[]) => {
    seen.push(["people", ...args]);
  });
  events.on("on_insert_other", () => {
    seen.push(["other"]);
  });
  await events.emitFor("on_insert", "people", [1], "x");
  assert.deepEqual(seen, [["generic", "people", [1], "x"], ["people", [1], "x"]]);
});

Deno.test("callbacks run in registration order, each awaited before the next", async () => {
  const events = new Events();
  const seen: string[] = [];
  events.on("e", async () => {
    await delay(10);
    seen.push("slow");
  });
  events.on("e", () => {
    seen.push("sync");
  });
  events.on("e", async () => {
    await delay(1);
    seen.push("fast");
  });
  await events.emit("e");
  assert.deepEqual(seen, ["slow", "sync", "fast"]);
});

Deno.test("the first callback that throws (sync or async) stops the rest and rejects", async () => {
  const events = new Events();
  const seen: string[] = [];
  const boom = new Error("boom");
  events.on("sync", () => {
    throw boom;
  });
  events.on("sync", () => {
    seen.push("after sync");
  });
  await assert.rejects(events.emit("sync"), (e) => e === boom);
  events.on("async", async () => {
    await delay(1);
    throw boom;
  });
  events.on("async", () => {
    seen.push("after async");
  });
  await assert.rejects(events.emit("async"), (e) => e === boom);
  events.on("generic", () => {
    throw boom;
  });
  events.on("generic_people", () => {
    seen.push("specific");
  });
  await assert.rejects(events.emitFor("generic", "people"), (e) => e === boom);
  assert.deepEqual(seen, []);
});

Deno.test("off removes one registration; has sees both forms", async () => {
  const events = new Events();
  let count = 0;
  const callback = () => {
    count++;
  };
  events.on("on_fetched_item", callback).on("on_fetched_item", callback);
  await events.emit("on_fetched_item");
  assert.equal(count, 2);
  events.off("on_fetched_item", callback);
  await events.emit("on_fetched_item");
  assert.equal(count, 3);
  assert.equal(events.has("on_fetched_item"), true);
  events.off("on_fetched_item", callback).off("on_fetched_item", callback);
  assert.equal(events.has("on_fetched_item"), false);
  assert.equal(events.has("on_delete_resource_originals", "people"), false);
  events.on("on_delete_resource_originals_people", callback);
  assert.equal(events.has("on_delete_resource_originals", "people"), true);
  assert.equal(events.has("on_delete_resource_originals", "other"), false);
  assert.equal(events.has("on_delete_resource_originals"), false);
});

Deno.test("a callback registered while an event is raised waits for the next one", async () => {
  const events = new Events();
  let late = 0;
  events.on("e", () => {
    events.on("e", () => {
      late++;
    });
  });
  await events.emit("e");
  assert.equal(late, 0);
  await events.emit("e");
  assert.equal(late, 1);
});

Deno.test("on refuses a callback that is not a function", () => {
  assert.throws(() => new Events().on("e", "nope" as never), TypeError);
});

Deno.test("the catalogue names every event of the spec", () => {
  const methods = ["GET", "POST", "PATCH", "PUT", "DELETE"];
  assert.deepEqual(
    [...EVENTS].sort(),
    [
      ...methods.flatMap((m) => [`on_pre_${m}`, `on_post_${m}`]),
      "on_fetched_resource",
      "on_fetched_item",
      "on_fetched_diffs",
      "on_insert",
      "on_inserted",
      "on_replace",
      "on_replaced",
      "on_update",
      "on_updated",
      "on_delete_item",
      "on_deleted_item",
      "on_delete_resource",
      "on_delete_resource_originals",
      "on_deleted_resource",
      "before_aggregation",
      "after_aggregation",
      "on_oplog_push",
    ].sort(),
  );
  assert.equal(RESOURCE_EVENTS.includes("on_oplog_push"), false);
  assert.equal(resourceEvent("on_insert", "people"), "on_insert_people");
});
