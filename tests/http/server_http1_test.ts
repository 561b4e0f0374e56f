/**
 * The service's HTTP/1.1 server (src/http/server.ts, http1*.ts) at the byte level: request
 * framing (lengths, chunked bodies, pipelining, 100-continue, HTTP/1.0), answers (whole
 * bodies with their length, streams chunked or with a declared length, HEAD, 204/304),
 * refusals that keep one request from being read two ways, unread bodies, handler
 * failures, and a client closing during a streamed answer. Every exchange runs twice: with
 * whole bodies recognised and lazy requests (the defaults), and with every body relayed as a
 * stream and every request a full `Request` from the start.
 */
import assert from "node:assert/strict";
import { type FetchHandler, serve } from "../../src/http/server.ts";
import { decodeLatin1, parseHead, type RequestHead } from "../../src/http/http1.ts";
import { WHOLE_BODIES } from "../../src/http/http1_answer.ts";
import { closeQuietly } from "../support/net.ts";
import { until } from "../support/wait.ts";

const LIMITS = { headersTimeoutMs: 2000, idleTimeoutMs: 4000, maxConnections: 64 };
const encode = (s: string) => new TextEncoder().encode(s);

/** Echoes what it was sent, and answers a few fixed routes. */
const handler: FetchHandler = async (request, info) => {
  const url = new URL(request.url);
  switch (url.pathname) {
    case "/echo": {
      const body = request.body ? await request.text() : "";
      return new Response(`${request.method} ${url.pathname}${url.search} [${body}]`, {
        headers: {
          "x-host": request.headers.get("host") ?? "",
          "x-remote": info.remoteAddr.transport,
        },
      });
    }
    case "/bytes":
      return new Response(new Uint8Array([0, 1, 2, 255]));
    case "/empty":
      return new Response(null, { status: 204, headers: { etag: '"e"' } });
    case "/not-modified":
      return new Response(null, { status: 304, headers: { etag: '"e"' } });
    case "/declared":
      return new Response(new Blob(["abcdef"]).stream(), { headers: { "content-length": "6" } });
    case "/stream":
      return new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(encode("one,"));
            c.enqueue(encode("two"));
            c.close();
          },
        }),
      );
    case "/unicode":
      return new Response("héllo ✓", {
        headers: { "x-latin": request.headers.get("x-latin") ?? "" },
      });
    case "/ignore-body":
      return new Response("ignored");
    case "/early":
      // Answers while its read of the body is still waiting for bytes.
      request.body!.getReader().read().catch(() => {});
      return new Response("early");
    case "/throw":
      throw new Error("handler failed");
    default:
      return new Response("nope", { status: 404 });
  }
};

/** Runs `body` against a server with `handler`, once per way of writing bodies. */
function exchange(
  name: string,
  body: (port: number, o: { logs: string[]; whole: boolean }) => Promise<void>,
  h = handler,
) {
  for (const inspectBodies of [true, false]) {
    const variant = inspectBodies ? "" : " (bodies as streams, full requests)";
    Deno.test(`http/1.1 server: ${name}${variant}`, async () => {
      const logs: string[] = [];
      const server = await serve(h, {
        hostname: "127.0.0.1",
        port: 0,
        limits: LIMITS,
        inspectBodies,
        lazyRequests: inspectBodies,
        log: (_level, message, extra) => logs.push(`${message} ${JSON.stringify(extra ?? {})}`),
      });
      try {
        await body(server.addr.port, { logs, whole: inspectBodies });
      } finally {
        await server.shutdown();
      }
    });
  }
}

/** What a connection received, as latin1 text, read with one pending read at a time. */
class Received {
  text = "";
  closed = false;
  #pending: Promise<void> | null = null;
  readonly #buf = new Uint8Array(64 * 1024);

  constructor(readonly conn: Deno.Conn) {}

  /** Reads until `done` holds for the text, the peer closes, or `ms` pass. */
  async until(done: (text: string) => boolean, ms: number): Promise<this> {
    const deadline = Date.now() + ms;
    while (!this.closed && !done(this.text) && Date.now() < deadline) {
      this.#pending ??= this.conn.read(this.#buf).then((n) => {
        this.#pending = null;
        if (n === null) this.closed = true;
        else this.text += decodeLatin1(this.#buf.subarray(0, n));
      }, () => {
        this.#pending = null;
        this.closed = true;
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#pending,
        new Promise((r) => timer = setTimeout(r, Math.max(0, deadline - Date.now()))),
      ]);
      clearTimeout(timer);
    }
    return this;
  }
}

/** Sends `bytes` on a fresh connection and returns what arrived until it closed (or `ms`). */
async function raw(port: number, bytes: string | Uint8Array, ms = 2000): Promise<Received> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(typeof bytes === "string" ? encode(bytes) : bytes);
    return await new Received(conn).until(() => false, ms);
  } finally {
    closeQuietly(conn);
  }
}

/** The answers in `text`, split by their framing (Content-Length or chunked). */
function answers(
  text: string,
): { head: string; status: number; headers: Map<string, string>; body: string }[] {
  const out = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    assert.notEqual(end, -1, `no end of head in ${JSON.stringify(rest)}`);
    const head = rest.slice(0, end);
    const [statusLine, ...lines] = head.split("\r\n");
    const headers = new Map(lines.map((l) => {
      const c = l.indexOf(":");
      return [l.slice(0, c).toLowerCase(), l.slice(c + 1).trim()] as [string, string];
    }));
    rest = rest.slice(end + 4);
    const status = Number(statusLine.split(" ")[1]);
    let body = "";
    if (headers.get("transfer-encoding") === "chunked") {
      for (;;) {
        const lineEnd = rest.indexOf("\r\n");
        const size = parseInt(rest.slice(0, lineEnd), 16);
        rest = rest.slice(lineEnd + 2);
        if (size === 0) {
          rest = rest.slice(2);
          break;
        }
        body += rest.slice(0, size);
        rest = rest.slice(size + 2);
      }
    } else if (headers.has("content-length") && status !== 304) {
      const n = Number(headers.get("content-length"));
      body = rest.slice(0, n);
      rest = rest.slice(n);
    } else if (status >= 200 && status !== 204 && status !== 304) {
      body = rest; // delimited by the end of the connection
      rest = "";
    }
    out.push({ head, status, headers, body });
  }
  return out;
}

Deno.test("http/1.1 server: whole bodies are recognised on this Deno (the fast path is on)", () => {
  assert.equal(WHOLE_BODIES, true);
});

Deno.test("http/1.1 heads: what could be read two ways is refused", () => {
  const refused = (text: string) => "refuse" in parseHead(text);
  const base = "POST /x HTTP/1.1\r\nHost: a";
  assert.ok(refused(`${base}\r\nContent-Length: 3\r\nTransfer-Encoding: chunked`));
  assert.ok(refused(`${base}\r\nContent-Length: 3\r\nContent-Length: 4`));
  assert.ok(refused(`${base}\r\nTransfer-Encoding: gzip, chunked`));
  assert.ok(refused(`${base}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked`));
  assert.ok(refused(`${base}\r\nContent-Length: +3`));
  assert.ok(refused(`${base}\r\nContent-Length : 3`), "space before the colon");
  assert.ok(refused(`${base}\r\n folded`), "obs-fold");
  assert.ok(refused(`${base}\nX: bare LF`));
  assert.ok(refused(`${base}\r\nX: a\rb`));
  assert.ok(refused("GET /x HTTP/1.1"), "HTTP/1.1 without Host");
  assert.ok(refused(`${base}\r\nHost: b`), "two Host fields");
  assert.ok(refused("GET /x HTTP/1.0\r\nTransfer-Encoding: chunked"));
  assert.ok(refused("get /x HTTP/1.1\r\nHost: a"));
  assert.ok(refused("GET /x y HTTP/1.1\r\nHost: a"));
  assert.ok(refused("GET /x HTTP/2.0\r\nHost: a"));
  const many = Array.from({ length: 101 }, (_, i) => `X-${i}: v`).join("\r\n");
  assert.deepEqual(parseHead(`GET / HTTP/1.1\r\nHost: a\r\n${many}`), { refuse: 431 });
  const ok = parseHead(`${base}\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: 5`);
  assert.ok(!("refuse" in ok));
  const head = ok as RequestHead;
  assert.equal(head.length, 5);
  assert.equal(head.keepAlive, false);
  assert.equal(head.expectContinue, true);
  const old = parseHead("GET / HTTP/1.0\r\nConnection: keep-alive") as RequestHead;
  assert.equal(old.keepAlive, true);
  assert.equal(old.host, null);
});

exchange("pipelined requests are answered in order, bodies by length and chunked", async (port) => {
  const { text } = await raw(
    port,
    "GET /echo?a=1 HTTP/1.1\r\nHost: h1\r\n\r\n" +
      "POST /echo HTTP/1.1\r\nHost: h2\r\nContent-Length: 5\r\n\r\nhello" +
      "POST /echo HTTP/1.1\r\nHost: h3\r\nTransfer-Encoding: chunked\r\n\r\n" +
      "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n" +
      "GET /bytes HTTP/1.1\r\nHost: h4\r\nConnection: close\r\n\r\n",
  );
  const got = answers(text);
  assert.deepEqual(got.map((a) => a.body), [
    "GET /echo?a=1 []",
    "POST /echo [hello]",
    "POST /echo [abcde]",
    "\x00\x01\x02\xff",
  ]);
  assert.deepEqual(got.map((a) => a.headers.get("x-host")), ["h1", "h2", "h3", undefined]);
  assert.equal(got[0].headers.get("x-remote"), "tcp");
  assert.ok(got.every((a) => a.headers.has("date")));
  assert.equal(got[3].headers.get("connection"), "close");
});

exchange(
  "a whole body has its length in bytes; header bytes beyond ASCII pass as they are",
  async (port, { whole }) => {
    const head = new Uint8Array([
      ...encode("GET /unicode HTTP/1.1\r\nHost: a\r\nX-Latin: caf"),
      0xe9,
      ...encode("\r\nConnection: close\r\n\r\n"),
    ]);
    const { text } = await raw(port, head);
    const [answer] = answers(text);
    assert.equal(answer.headers.get("x-latin"), "caf\xe9");
    const body = Uint8Array.from(answer.body, (c) => c.charCodeAt(0));
    assert.equal(new TextDecoder().decode(body), "héllo ✓");
    if (whole) assert.equal(answer.headers.get("content-length"), "10");
    else assert.equal(answer.headers.get("transfer-encoding"), "chunked");
  },
);

exchange(
  "streams are chunked, or sent as declared; HEAD, 204 and 304 carry no body",
  async (port, { whole }) => {
    const { text } = await raw(
      port,
      "GET /stream HTTP/1.1\r\nHost: a\r\n\r\n" +
        "GET /declared HTTP/1.1\r\nHost: a\r\n\r\n" +
        "GET /empty HTTP/1.1\r\nHost: a\r\n\r\n" +
        "GET /not-modified HTTP/1.1\r\nHost: a\r\n\r\n" +
        "HEAD /echo HTTP/1.1\r\nHost: a\r\n\r\n" +
        "GET /echo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
    // The HEAD answer has no body: split the text at the last head by hand.
    const lastHead = text.lastIndexOf("HTTP/1.1 200");
    const headAnswer = text.lastIndexOf("HTTP/1.1 200", lastHead - 1);
    const got = answers(text.slice(0, headAnswer));
    assert.deepEqual(got.map((a) => [a.status, a.body]), [
      [200, "one,two"],
      [200, "abcdef"],
      [204, ""],
      [304, ""],
    ]);
    assert.equal(got[0].headers.get("transfer-encoding"), "chunked");
    assert.equal(got[1].headers.get("content-length"), "6");
    assert.equal(got[2].headers.get("etag"), '"e"');
    assert.ok(!got[2].headers.has("content-length"));
    assert.ok(!text.includes("never sent"));
    const headOnly = text.slice(headAnswer, lastHead);
    assert.ok(headOnly.endsWith("\r\n\r\n"), JSON.stringify(headOnly));
    // HEAD keeps the length of the body the handler gave, when it is known without reading.
    if (whole) assert.match(headOnly, /content-length: 13\r\n/);
    else assert.doesNotMatch(headOnly, /content-length/);
    assert.equal(answers(text.slice(lastHead))[0].body, "GET /echo []");
  },
);

exchange(
  "HTTP/1.0 closes after the answer unless asked to keep the connection",
  async (port, { whole }) => {
    const closing = await raw(port, "GET /echo HTTP/1.0\r\n\r\n");
    assert.ok(closing.closed);
    assert.equal(answers(closing.text)[0].body, "GET /echo []");
    assert.equal(answers(closing.text)[0].headers.get("connection"), "close");
    const kept = await raw(port, "GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 500);
    // HTTP/1.0 has no chunked coding: an answer of unknown length ends with the connection.
    assert.equal(kept.closed, !whole);
    assert.equal(answers(kept.text)[0].headers.get("connection"), whole ? "keep-alive" : "close");
    assert.equal(answers(kept.text)[0].body, "GET /echo []");
  },
);

exchange(
  "requests arriving a few bytes at a time are read as when they arrive whole",
  async (port) => {
    const requests = "POST /echo?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world" +
      "POST /echo HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n" +
      "5\r\nsplit\r\n7\r\n chunks\r\n0\r\n\r\n" +
      "GET /echo HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n";
    const bytes = encode(requests);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      conn.setNoDelay(true);
      const received = new Received(conn);
      // Pieces of 1 to 7 bytes, a pause after some: the server sees heads, sizes and CRLFs cut
      // at every kind of place.
      let seed = 7;
      for (let at = 0; at < bytes.length;) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        const n = 1 + seed % 7;
        await conn.write(bytes.subarray(at, at + n));
        at += n;
        if (seed % 3 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      await received.until(() => false, 3000);
      assert.ok(received.closed);
      assert.deepEqual(answers(received.text).map((a) => a.body), [
        "POST /echo?x=1 [hello world]",
        "POST /echo [split chunks]",
        "GET /echo []",
      ]);
    } finally {
      closeQuietly(conn);
    }
  },
);

exchange("Expect: 100-continue gets a 100 before the body is read", async (port) => {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(
      encode("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"),
    );
    const received = await new Received(conn).until((t) => t.endsWith("\r\n\r\n"), 2000);
    assert.equal(received.text, "HTTP/1.1 100 Continue\r\n\r\n");
    await conn.write(encode("body"));
    await received.until((t) => t.endsWith("[body]"), 2000);
    assert.equal(answers(received.text)[1].body, "POST /echo [body]");
  } finally {
    closeQuietly(conn);
  }
});

exchange("a small unread body is skipped; a large one closes the connection", async (port) => {
  const small = await raw(
    port,
    "POST /ignore-body HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789" +
      "GET /echo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
  );
  assert.deepEqual(answers(small.text).map((a) => a.body), ["ignored", "GET /echo []"]);
  const large = await raw(
    port,
    `POST /ignore-body HTTP/1.1\r\nHost: a\r\nContent-Length: ${1 << 20}\r\n\r\n0123`,
  );
  assert.ok(large.closed);
  assert.equal(answers(large.text)[0].headers.get("connection"), "close");
});

exchange(
  "an answer sent while the handler still reads the body keeps the connection in step",
  async (port) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(encode("POST /early HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n"));
      const received = await new Received(conn).until((t) => t.endsWith("early"), 2000);
      assert.equal(answers(received.text)[0].body, "early");
      await conn.write(
        encode("0123456789GET /echo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
      );
      await received.until(() => false, 2000);
      assert.ok(received.closed);
      assert.deepEqual(answers(received.text).map((a) => a.body), ["early", "GET /echo []"]);
    } finally {
      closeQuietly(conn);
    }
  },
);

exchange(
  "refused heads and bad URLs answer 400 and close; a handler failure is a logged 500",
  async (port, { logs }) => {
    for (
      const bytes of [
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
      ]
    ) {
      const r = await raw(port, bytes);
      assert.ok(r.closed);
      assert.match(r.text, /^HTTP\/1\.1 400 /);
    }
    const failed = await raw(port, "GET /throw HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert.equal(answers(failed.text)[0].status, 500);
    assert.equal(answers(failed.text)[0].body, "Internal Server Error");
    assert.ok(!failed.text.includes("handler failed"));
    assert.ok(logs.some((l) => l.includes("handler failed")));
    const absolute = await raw(
      port,
      "GET http://elsewhere/echo?b=2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
    assert.equal(answers(absolute.text)[0].body, "GET /echo?b=2 []");
  },
);

exchange(
  "a malformed chunked body fails the handler's read, and the connection closes",
  async (port) => {
    const r = await raw(
      port,
      "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    );
    assert.ok(r.closed);
    assert.equal(answers(r.text)[0].status, 500);
  },
);

let cancelled = 0;
exchange(
  "a client closing during a streamed answer cancels the stream",
  async (port) => {
    const before = cancelled;
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("GET /forever HTTP/1.1\r\nHost: a\r\n\r\n"));
    const first = await new Received(conn).until((t) => t.includes("tick"), 2000);
    assert.match(first.text, /transfer-encoding: chunked/);
    closeQuietly(conn);
    await until(() => cancelled > before, "the stream's cancel", { ms: 2000 });
  },
  () =>
    Promise.resolve(
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(encode("tick"));
          },
          cancel() {
            cancelled++;
          },
        }),
      ),
    ),
);
