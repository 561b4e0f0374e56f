/**
 * The ceiling for any request: a Hono hello-world on Deno.serve.
 * `deno run -A bench/hello.ts PORT`.
 * `deno run -A bench/hello.ts PORT --answer=FILE` answers every request with the body and
 * headers in FILE (`{"body": "...", "headers": {...}}`), the second answer of each connection
 * padded as the service pads it (WRITE_BUFFER_BYTES's default; src/http/write_buffer.ts): the
 * ceiling for an answer of that size and shape, with no work behind it.
 */
import { Hono } from "hono";
import { PADDING_FIELD, writeBufferPadding } from "../src/http/write_buffer.ts";
import { GLOBAL_KEYS } from "../src/settings/keys.ts";

const app = new Hono();
const answerFile = Deno.args.find((a) => a.startsWith("--answer="))?.slice("--answer=".length);
if (answerFile) {
  const { body, headers } = JSON.parse(await Deno.readTextFile(answerFile));
  const padding = writeBufferPadding(GLOBAL_KEYS.WRITE_BUFFER_BYTES.default);
  app.get("*", (c) => {
    const response = new Response(body, { headers });
    const peer = (c.env as Deno.ServeHandlerInfo<Deno.NetAddr>).remoteAddr;
    if (padding.shouldPad(peer.hostname, peer.port)) {
      response.headers.set(PADDING_FIELD, padding.value);
    }
    return response;
  });
} else app.get("/", (c) => c.json({ hello: "world" }));
const port = Number(Deno.args[0] ?? 8001);
Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.error("serving hello") },
  app.fetch,
);
// Exit normally on a signal, so that a `--cpu-prof` profile gets written.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => Deno.exit(0));
}
