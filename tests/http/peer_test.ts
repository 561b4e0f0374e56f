/**
 * The peer address is asked of the server once per request (`Deno.serve` makes a new
 * address at every read of `remoteAddr`), whatever reads it: the count of requests in
 * flight, the request log, the route.
 */
import assert from "node:assert/strict";
import { withPeopleService } from "../support/embedded.ts";

Deno.test("peer address: read once per request, and the one every log record carries", () => {
  const records: Array<Record<string, unknown>> = [];
  const logger = {
    log: (_level: string, _message: string, extra?: Record<string, unknown>) =>
      void records.push(extra ?? {}),
  };
  return withPeopleService(logger, async (service) => {
    let reads = 0;
    const info = () => ({
      get remoteAddr() {
        reads++;
        return { transport: "tcp" as const, hostname: "192.0.2.7", port: 4000 };
      },
      completed: Promise.resolve(),
    });
    const post = await service.fetch(
      new Request("http://localhost/people", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "a" }),
      }),
      info(),
    );
    assert.equal(post.status, 201, await post.text());
    assert.equal(reads, 1);
    assert.equal(records.find((record) => record.method === "POST")?.clientip, "192.0.2.7");
    const get = await service.fetch(new Request("http://localhost/people"), info());
    assert.equal(get.status, 200, await get.text());
    assert.equal(reads, 2);
  });
});
