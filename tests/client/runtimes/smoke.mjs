// The client's main flows as plain JavaScript, run by Node and by Chromium against the
// bundled client (tests/client/client_runtimes_test.ts). Answers what it saw.
// The bundle sits beside this file only once the test has built it: imported by URL.
const { ConflictError, createClient, NotFoundError } = await import(
  String(new URL("./client.mjs", import.meta.url))
);

export async function smoke(baseUrl, tag) {
  const api = createClient({ baseUrl });
  const people = api.resource("people");
  const out = {};
  const written = await people.create({ lastname: `R${tag}`, firstname: "Run" });
  out.created = written._status;
  const got = await people.get({ lastname: `R${tag}` });
  out.lookup = got._id === written._id;
  await people.patch(got, { firstname: "Time" });
  try {
    await people.patch(written._id, { firstname: "stale" }, { etag: written._etag });
  } catch (error) {
    out.conflict = error instanceof ConflictError ? error.current.firstname : String(error);
  }
  const page = await people.list({ where: { lastname: `R${tag}` }, projection: { lastname: 1 } });
  out.listed = page.items.map((p) => p.lastname);
  try {
    await people.get("0123456789abcdef01234567");
  } catch (error) {
    out.notFound = error instanceof NotFoundError;
  }
  // HMAC signing (WebCrypto) and Basic (btoa): the shipped settings accept any credentials.
  const hmac = createClient({ baseUrl, auth: { hmac: { username: "u", secret: "s".repeat(16) } } });
  out.hmac = (await hmac.resource("people").list({ maxResults: 1 })).items.length;
  const basic = createClient({ baseUrl, auth: { basic: { username: "u", password: "p" } } });
  out.basic = (await basic.resource("people").list({ maxResults: 1 })).items.length;
  // The change feed (fetch streaming, TextDecoderStream).
  const feed = people.changes({ documents: true });
  const ready = await feed.next();
  await people.create({ lastname: `S${tag}` });
  const insert = await feed.next();
  await feed.return(undefined);
  out.feed = [ready.value.type, insert.value.type, insert.value.document.lastname];
  await people.delete(written._id);
  out.deleted = true;
  return out;
}
