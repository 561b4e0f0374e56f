/**
 * The ceiling for any request: a Hono hello-world on Deno.serve. `deno run -A bench/hello.ts PORT`.
 */
import { Hono } from "hono";

const app = new Hono();
app.get("/", (c) => c.json({ hello: "world" }));
const port = Number(Deno.args[0] ?? 8001);
Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.error("serving hello") },
  app.fetch,
);
