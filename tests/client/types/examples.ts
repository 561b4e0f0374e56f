/**
 * Typed uses of the client that must pass `deno check` (tests/client/client_types_test.ts
 * checks this file; it is never run). Types: config/api_types.ts, generated from the
 * shipped config/settings.json.
 */
import {
  type ChangeEvent,
  ConflictError,
  createClient,
  type Page,
  ValidationError,
  type Written,
} from "../../../src/client/mod.ts";
import {
  type Api,
  paths,
  type PeopleDocument,
  type WorksDocument,
} from "../../../config/api_types.ts";

export async function examples(signal: AbortSignal): Promise<void> {
  const api = createClient<Api>({ baseUrl: "http://localhost:5000/", paths });
  const people = api.resource("people");

  const page: Page<PeopleDocument> = await people.list({
    where: {
      lastname: "Lovelace",
      "location.city": { $in: ["London", "Paris"] },
      role: "author",
      $or: [{ firstname: { $regex: "^A" } }, { born: { $exists: true } }],
    },
    sort: ["-born", "lastname"],
    projection: { firstname: 1, lastname: 1 },
    maxResults: 10,
    page: 2,
    signal,
  });
  const first: string | undefined = page.items[0]?.firstname;
  const total: number | undefined = page.meta.total;
  void first, total;

  for await (const person of people.all({ where: { firstname: "Ada" } })) {
    const city: string | undefined = person.location?.city;
    void city;
  }

  const byId: PeopleDocument = await people.get("0123456789abcdef01234567");
  const byLookup = await people.get({ lastname: "Lovelace" }, { signal });
  const written: Written = await people.create({ lastname: "Byron", role: ["author"] });
  const many: Written[] = await people.create([{ lastname: "A" }, { lastname: "B" }]);
  await people.patch(byId, { firstname: "Augusta Ada", location: { city: "London" } });
  await people.put(written._id, { lastname: "Byron" }, { signal });
  await people.delete(byLookup);
  void many;

  try {
    await people.patch(byId, { firstname: "x" });
  } catch (error) {
    if (error instanceof ConflictError) {
      const current = error.current as PeopleDocument | null;
      void current?.lastname;
    }
    if (error instanceof ValidationError) {
      const issue = (error as ValidationError<PeopleDocument>).issues.lastname;
      void issue;
    }
  }

  const works = api.resource("works");
  const embedded: WorksDocument[] = (await works.list({ embedded: { owner: 1 } })).items;
  void embedded;
  const hers = api.resource("people_works", { owner: byId._id });
  await hers.create({ title: "Notes" });

  const feed: AsyncGenerator<ChangeEvent<PeopleDocument>> = people.changes({
    documents: true,
    where: { lastname: "Lovelace" },
    signal,
  });
  for await (const event of feed) {
    if (event.type === "reset") break;
    void event.document?.lastname;
  }

  const file = await api.download("/media/0123456789abcdef01234567", {
    range: { start: 0, end: 1023 },
  });
  const stream: ReadableStream<Uint8Array> = file.stream;
  void stream;
}
