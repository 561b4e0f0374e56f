/**
 * Memory of streamed media: uploads a generated file of `--mb` MiB (default 200) as a
 * multipart body and downloads it again from the media endpoint, and reports how much
 * each raised the service process's resident memory (VmHWM, the peak, against VmRSS
 * before, from /proc/<pid>/status). The body is generated as it is sent and the download
 * is hashed as it arrives: neither side holds the file. Not part of the test suite.
 *
 *   deno run -A bench/media_rss.ts                       # both stores, 200 MiB
 *   deno run -A bench/media_rss.ts --stores=embedded --mb=50
 *
 * The MongoDB run uses MONGO_URI when set, else a jongodb emulator it starts.
 */
import { parseArgs } from "node:util";
import { freePort, type Server, startProcess } from "./bench.ts";
import { mongoTarget } from "../tests/support/jongodb.ts";

const MiB = 1024 * 1024;
/** Bytes per piece the client sends. */
const PIECE = 64 * 1024;

/** Resident memory of a process, in bytes: now (VmRSS) and its peak so far (VmHWM). */
async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 };
}

/**
 * Resets the process's peak (VmHWM) to its current RSS, so each phase's peak is its own;
 * false where the kernel does not allow it (then a later phase's peak may be an earlier one's).
 */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Byte `i` of the generated file. */
const byteAt = (i: number) => (i * 2654435761) >>> 24;

/** A running hash of bytes (FNV-1a), so content is checked without holding it. */
class Hash {
  value = 0x811c9dc5;
  update(bytes: Uint8Array) {
    let h = this.value;
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
    this.value = h;
  }
}

/** A multipart body with one file of `size` bytes, generated piece by piece as it is sent. */
function multipartBody(
  size: number,
  hash: Hash,
): { body: ReadableStream<Uint8Array>; type: string } {
  const boundary = "rss-bench-boundary-7d1f";
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nbig\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="big.bin"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  let sent = -1;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === -1) {
        controller.enqueue(head);
        sent = 0;
      } else if (sent < size) {
        const piece = new Uint8Array(Math.min(PIECE, size - sent));
        for (let i = 0; i < piece.length; i++) piece[i] = byteAt(sent + i);
        hash.update(piece);
        sent += piece.length;
        controller.enqueue(piece);
      } else {
        controller.enqueue(tail);
        controller.close();
      }
    },
  });
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function startService(dir: string, env: Record<string, string>): Promise<Server> {
  const file = `${dir}/settings.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      RETURN_MEDIA_AS_URL: true,
      MAX_FILE_SIZE: 1024 * MiB,
      RESOURCE_METHODS: ["GET", "POST"],
      ITEM_METHODS: ["GET", "DELETE"],
      DOMAIN: { files: { schema: { name: { type: "string" }, data: { type: "media" } } } },
    }),
  );
  const port = freePort();
  return await startProcess(["src/main.ts", "--settings", file], {
    ...env,
    PORT: String(port),
    HOST: "127.0.0.1",
  }, port);
}

/** Uploads a file of `size` bytes, then downloads it; memory and time of each. */
async function run(server: Server, size: number) {
  const pid = server.process.pid;
  const upHash = new Hash();
  const { body, type } = multipartBody(size, upHash);
  await resetPeak(pid);
  const before = await memoryOf(pid);
  let started = performance.now();
  const res = await fetch(`${server.base}/files`, {
    method: "POST",
    headers: { "content-type": type },
    body,
  });
  const created = await res.json();
  if (res.status !== 201) {
    throw new Error(`upload answered ${res.status}: ${JSON.stringify(created)}`);
  }
  const uploadMs = performance.now() - started;
  const afterUpload = await memoryOf(pid);
  const item = await (await fetch(`${server.base}/files/${created._id}`)).json();
  await resetPeak(pid);
  const beforeDownload = await memoryOf(pid);
  started = performance.now();
  const download = await fetch(`${server.base}${item.data}`);
  const downHash = new Hash();
  let received = 0;
  for await (const chunk of download.body!) {
    downHash.update(chunk);
    received += chunk.byteLength;
  }
  const downloadMs = performance.now() - started;
  const afterDownload = await memoryOf(pid);
  if (received !== size || downHash.value !== upHash.value) {
    throw new Error(
      `download differs: ${received} bytes, hash ${downHash.value} vs ${upHash.value}`,
    );
  }
  return {
    before,
    upload: { rise: afterUpload.hwm - before.rss, ms: uploadMs },
    download: { rise: afterDownload.hwm - beforeDownload.rss, ms: downloadMs },
    afterDownload,
  };
}

async function measure(store: string, size: number): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-media-rss-" });
  let env: Record<string, string> = { STORE: "embedded", DATA_DIR: `${dir}/data` };
  let mongo: Awaited<ReturnType<typeof mongoTarget>> | undefined;
  if (store === "mongo") {
    mongo = await mongoTarget();
    const uri = mongo.uri.replace(/\/[^/?]*(\?|$)/, `/mediarss$1`);
    env = { STORE: "mongo", MONGO_URI: uri };
  }
  const server = await startService(dir, env);
  try {
    await run(server, MiB); // warm-up: code loaded and compiled before measuring
    const r = await run(server, size);
    const mb = (n: number) => (n / MiB).toFixed(1);
    const rate = (ms: number) => (size / MiB / (ms / 1000)).toFixed(0);
    return [
      store,
      mb(size),
      mb(r.before.rss),
      mb(r.upload.rise),
      `${(r.upload.ms / 1000).toFixed(1)} s (${rate(r.upload.ms)} MiB/s)`,
      mb(r.download.rise),
      `${(r.download.ms / 1000).toFixed(1)} s (${rate(r.download.ms)} MiB/s)`,
    ];
  } finally {
    await server.stop();
    await mongo?.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { stores: { type: "string" }, mb: { type: "string" } },
  });
  const stores = (values.stores ?? "embedded,mongo").split(",");
  const size = Number(values.mb ?? 200) * MiB;
  const head = [
    "store",
    "file MiB",
    "RSS before MiB",
    "upload rise MiB",
    "upload time",
    "download rise MiB",
    "download time",
  ];
  console.log(`| ${head.join(" | ")} |\n|${head.map(() => "---").join("|")}|`);
  for (const store of stores) {
    try {
      console.log(`| ${(await measure(store, size)).join(" | ")} |`);
    } catch (error) {
      console.log(`| ${store} | failed: ${(error as Error).message} |`);
    }
  }
}
