/** A TCP port free on the loopback interface right now (for child servers of the tests). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Reads until the peer closes or `ms` pass; returns what arrived and whether it closed. */
export async function readUntilClosed(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; closed: boolean }> {
  const buf = new Uint8Array(4096);
  let text = "";
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buf).catch(() => null),
      new Promise<"wait">((r) => timer = setTimeout(() => r("wait"), deadline - Date.now())),
    ]);
    clearTimeout(timer);
    if (n === "wait") return { text, closed: false };
    if (n === null) return { text, closed: true };
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return { text, closed: false };
}

/** Closes `conn`, ignoring that it may be closed already. */
export function closeQuietly(conn: Deno.Conn) {
  try {
    conn.close();
  } catch { /* closed */ }
}

/**
 * Reads one answer with a Content-Length (or none: until closed), at most `ms`; returns what
 * arrived (the answer whole when `complete`) and whether the peer closed.
 */
export async function readAnswer(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; complete: boolean; closed: boolean }> {
  const buf = new Uint8Array(4096);
  let text = "";
  const deadline = Date.now() + ms;
  const complete = () => {
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) return false;
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
    return length !== undefined && text.length - end - 4 >= Number(length);
  };
  while (!complete() && Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buf).catch(() => null),
      new Promise<"wait">((r) => timer = setTimeout(() => r("wait"), deadline - Date.now())),
    ]);
    clearTimeout(timer);
    if (n === "wait") break;
    if (n === null) return { text, complete: complete(), closed: true };
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return { text, complete: complete(), closed: false };
}
