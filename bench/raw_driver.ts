/**
 * The MongoDB comparison point for `deno task bench --mongo` and `bench/in_process_mongo.ts`:
 * the same reads the service makes for GET item and GET page (find by id; a page of 25 with
 * its total), done with the raw driver behind a Hono app on `Deno.serve`, with no
 * validation, links, ETags or envelopes beyond the page's items and total.
 *
 *   deno run -A bench/raw_driver.ts PORT MONGO_URI                  # the URI names the database
 *   deno run -A bench/raw_driver.ts PORT MONGO_URI --same-answer    # items as the service answers
 */
import { Hono } from "hono";
import { type Collection, MongoClient, ObjectId } from "mongodb";

const PAGE = 25;

/**
 * An item as the service answers it with the bench's settings: dates in the RFC 1123 form,
 * no `_etag` (`IF_MATCH` is off), its `_links`.
 */
function asServiceAnswers(doc: Record<string, unknown>): Record<string, unknown> {
  const { _etag: _, ...rest } = doc;
  const id = String(doc._id);
  for (const key of ["_created", "_updated"]) {
    if (rest[key] instanceof Date) rest[key] = (rest[key] as Date).toUTCString();
  }
  rest._links = {
    self: { href: `people/${id}`, title: "people" },
    parent: { href: "/", title: "home" },
    collection: { href: "people", title: "people" },
  };
  return rest;
}

/**
 * The Hono app answering GET `/people/:id` and GET `/people?page=N` from `people`. With
 * `sameAnswer`, an item is answered in the service's representation (see
 * {@link asServiceAnswers}), so both sides send the same number of bytes.
 */
export function rawApp(people: Collection, options: { sameAnswer?: boolean } = {}): Hono {
  const app = new Hono();
  const shape = options.sameAnswer ? asServiceAnswers : (doc: Record<string, unknown>) => doc;
  app.get("/people/:id", async (c) => {
    const doc = await people.findOne({ _id: new ObjectId(c.req.param("id")) });
    return doc ? c.json(shape(doc)) : c.json({ _status: "ERR" }, 404);
  });
  app.get("/people", async (c) => {
    const page = Math.max(1, Number(c.req.query("page") ?? 1));
    const [items, total] = await Promise.all([
      people.find({}).skip((page - 1) * PAGE).limit(PAGE).toArray(),
      people.countDocuments({}),
    ]);
    return c.json({ _items: items, _meta: { page, max_results: PAGE, total } });
  });
  return app;
}

if (import.meta.main) {
  const [port, uri, mode] = Deno.args;
  const client = new MongoClient(uri);
  await client.connect();
  const app = rawApp(client.db().collection("people"), { sameAnswer: mode === "--same-answer" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: Number(port), onListen: () => console.error("serving raw") },
    app.fetch,
  );
  // A clean exit on SIGTERM (as the service has), so that a `--cpu-prof` profile is written.
  Deno.addSignalListener("SIGTERM", async () => {
    await server.shutdown();
    await client.close();
    Deno.exit(0);
  });
}
