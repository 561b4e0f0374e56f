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
