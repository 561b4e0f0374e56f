/**
 * Mistakes the generated types catch: every `@ts-expect-error` line below must fail to
 * type-check (an unused directive is itself an error, so `deno check` of this file fails
 * if a mistake slips through). tests/client/client_types_test.ts also checks the file with
 * the directives removed and counts one error per marked line.
 */
import { createClient } from "../../../src/client/mod.ts";
import { type Api, paths } from "../../../config/api_types.ts";

export async function misuse(): Promise<void> {
  const api = createClient<Api>({ baseUrl: "http://localhost:5000/", paths });
  const people = api.resource("people");
  // @ts-expect-error a misspelt field in a filter
  await people.list({ where: { lastnme: "Lovelace" } });
  // @ts-expect-error a wrong value type in a filter
  await people.list({ where: { lastname: 42 } });
  // @ts-expect-error a wrong operand type in an operator
  await people.list({ where: { "location.city": { $in: [1, 2] } } });
  // @ts-expect-error a sort key that is no field
  await people.list({ sort: ["-brn"] });
  // @ts-expect-error a projection of a field that does not exist
  await people.list({ projection: { fistname: 1 } });
  // @ts-expect-error embedding a field that is not embeddable
  await api.resource("works").list({ embedded: { title: 1 } });
  // @ts-expect-error a value not in the schema's allowed list
  await people.create({ lastname: "Byron", role: ["poet"] });
  // @ts-expect-error a required field missing on create
  await people.create({ firstname: "Ada" });
  // @ts-expect-error a misspelt field in a PATCH body
  await people.patch("0123456789abcdef01234567", { frstname: "Ada" });
  // @ts-expect-error a wrong type in a PATCH body
  await people.patch("0123456789abcdef01234567", { location: { city: 5 } });
  // @ts-expect-error a lookup the resource does not have
  await people.get({ firstname: "Ada" });
  // @ts-expect-error a resource that does not exist
  api.resource("persons");
  // @ts-expect-error a sub-resource without its URL variable
  api.resource("people_works");
  const person = await people.get("0123456789abcdef01234567");
  // @ts-expect-error a misspelt field of a read document
  void person.fistname;
  // @ts-expect-error a field read as the wrong type
  const age: number = person.lastname;
  void age;
}
