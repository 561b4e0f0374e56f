/**
 * The router (src/routes/router.ts) tries a path only against the endpoints its first
 * segment can match: the answer is always the first endpoint of the table whose expression
 * matches, as a scan of the whole table finds it.
 */
import assert from "node:assert/strict";
import { buildRoutes, type Endpoint, matchRoute } from "../../src/routes/router.ts";
import type { Domain } from "../../src/domain/build.ts";
import type { Resource } from "../../src/domain/types.ts";
import { parseUrl } from "../../src/domain/url.ts";

/** A resource with what the endpoint table reads of it. */
function resource(name: string, url: string, extra: Partial<Resource> = {}): Resource {
  return {
    name,
    urlParts: parseUrl(url),
    resourceMethods: ["GET"],
    itemMethods: ["GET"],
    itemLookup: true,
    itemUrl: "[a-f0-9]{24}",
    itemLookupField: "_id",
    ...extra,
  } as Resource;
}

const DOMAIN: Domain = new Map([
  ["users", resource("users", "users", { additionalLookup: { url: "[a-z]+", field: "name" } })],
  ["overseas", resource("overseas", "users/overseas")],
  ["invoices", resource("invoices", 'users/<regex("[a-f0-9]{24}"):owner>/invoices')],
  ["tenants", resource("tenants", '<regex("t[0-9]+"):tenant>/notes')],
  ["anything", resource("anything", '<regex(".+"):where>/deep')],
  ["people", resource("people", "people")],
]);

/** The first endpoint whose expression matches `path`, as a scan of the whole table. */
function scanned(endpoints: Endpoint[], path: string): Endpoint | null {
  return endpoints.find((endpoint) => endpoint.regex.test(path)) ?? null;
}

Deno.test("routes: a path matches the first endpoint a scan of the whole table finds", () => {
  const endpoints = buildRoutes(DOMAIN);
  const id = "0123456789abcdef01234567";
  const paths = [
    "",
    "users",
    "users/overseas",
    `users/${id}`,
    "users/ann",
    `users/${id}/invoices`,
    `users/${id}/invoices/${id}`,
    "t1/notes",
    `t1/notes/${id}`,
    "users/deep",
    "people/deep",
    "a/b/c/deep",
    "people",
    `people/${id}`,
    "people/ann",
    "nobody",
    "nobody/deep",
    "Users",
    "users/",
    "usersx/deep",
  ];
  for (const path of paths) {
    const expected = scanned(endpoints, path);
    const match = matchRoute(endpoints, path);
    assert.equal(match?.endpoint ?? null, expected, path);
  }
  assert.equal(matchRoute(endpoints, "users/overseas")?.endpoint.resource.name, "overseas");
  assert.equal(matchRoute(endpoints, "users/ann")?.endpoint.kind, "lookup");
  assert.deepEqual(matchRoute(endpoints, `users/${id}/invoices`)?.variables, { owner: id });
  assert.equal(matchRoute(endpoints, "people/deep")?.endpoint.resource.name, "anything");
  assert.equal(matchRoute(endpoints, "t7/notes")?.endpoint.resource.name, "tenants");
  assert.equal(matchRoute(endpoints, "nobody"), null);
});
