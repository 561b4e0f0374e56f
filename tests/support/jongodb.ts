/**
 * Test support: a MongoDB-wire server for tests. `MONGO_URI` selects a real MongoDB;
 * otherwise the jongodb emulator (an npm-installed native binary) is started on a free port.
 */
import { freePort } from "./net.ts";
import { processShared } from "./shared.ts";
import { JONGODB_BINARY } from "./test_deps.ts";

/**
 * The one list of jongodb emulator gaps: scenarios needing one of these are skipped on the
 * emulator (with the gap named) and run against a real MongoDB (`MONGO_URI`).
 */
export const JONGODB_GAPS: ReadonlyMap<string, string> = new Map([
  ["projection", "find projections are ignored: full documents come back"],
  ["$push", "$push/$pull/$addToSet and positional update operators are not implemented"],
  ["$avg", "most $group accumulators ($avg, $min, $max, ...) are not implemented"],
  [
    "decimal-sums",
    "sums of Decimal128 values come back as doubles (0.10 + 0.20 + 1.5 is 1.8, not the decimal 1.80)",
  ],
  ["$project-expressions", "computed expressions in $project/$addFields/$facet are ignored"],
  ["$comment", "a filter's $comment matches no document instead of every one"],
  ["$limit-checks", "$limit: 0 is taken (no documents) instead of refused"],
  ["$bucket", "$bucket and $bucketAuto are not implemented"],
  ["$setWindowFields", "$setWindowFields is not implemented"],
  [
    "lookup-equality",
    "$lookup's equality join meets neither numbers of different types (a Long 7 and a 7) nor list members",
  ],
  ["graphLookup-depthField", "$graphLookup's depthField is refused as an unsupported option"],
  [
    "lookup-as-path",
    "$lookup's 'as' with a dot writes a field named with the dot, not a nested field",
  ],
  [
    "nested-projection",
    "a nested document in $project is taken as a literal value, and a dotted path through a list of documents drops the field",
  ],
  [
    "graphLookup-equality",
    "$graphLookup meets no number of another type (a Long 7 and a 7) and takes a missing field for null",
  ],
  [
    "set-through-lists",
    "$set/$addFields with a dotted path replaces a list with a document instead of setting the field in each of its documents",
  ],
  [
    "group-key-documents",
    "a $group key written as a document is taken as it is: its field paths are not evaluated",
  ],
  ["$sample", "$sample is not implemented"],
  ["unwind-index", "$unwind's includeArrayIndex is refused as not supported"],
  ["unwind-options", "$unwind takes options it does not know"],
  ["date-operators", "date aggregation operators are not implemented"],
  ["geo", "$near, $geoWithin and $geoNear are not implemented"],
  ["$text", "$text search is not implemented"],
  ["ttl", "TTL indexes delete nothing: there is no TTL monitor"],
  ["aggregate-let", "an aggregation's let variables are not bound: $$name finds nothing"],
  ["change-streams", "change streams are not implemented"],
  ["listCollections", "listCollections is not implemented"],
  ["drop", "the drop command is not implemented"],
  [
    "index-redefinition",
    "createIndex with changed options on existing keys is silently ignored (no conflict error)",
  ],
  ["dropIndexes", "dropIndexes is not implemented"],
  ["decimal-scale", "Decimal128 values equal in number but not in scale (12.5, 12.50) differ"],
  [
    "all-as-equalities",
    "$all matches only an array holding its members, not a value equal to its one member ({v: 7} for {v: {$all: [7]}}) nor members reached through an array of documents",
  ],
  [
    "utf8-order",
    "strings compare by UTF-16 code units (a character beyond U+FFFF orders before U+E000-U+FFFF) instead of by code points, the order of their UTF-8 bytes",
  ],
  [
    "nested-array-paths",
    "a dotted path enters an array held in an array ({a: [[{b: 7}]]} matches a.b > 5)",
  ],
  [
    "nan-ranges",
    "range comparisons order NaN above every number ($lt: NaN matches numbers, $gte: 1 matches NaN) instead of matching NaN with $lte/$gte NaN alone",
  ],
  [
    "list-ranges",
    "a range against a list compares only members that are lists, not a stored list as a whole ({a: [1, 2]} is not >= [1, 2])",
  ],
  [
    "stored-patterns",
    "a $regex does not match a stored regular expression with the same source and flags",
  ],
  [
    "array-positions",
    "a number in a path reads an array element that is itself an array by its members ({a.0: 42} matches {a: [[42]]}) and not the field of that name in the array's documents",
  ],
  [
    "operand-refusals",
    "filters MongoDB refuses are read: an empty $and/$or/$nor, $not of a value, an operator inside $in, $nin or $all, a regex given to $ne or a range",
  ],
  [
    "mod-truncation",
    "$mod does not truncate fractions (8.5 has no remainder against 4), enters a list inside a list and divides numbers beyond 64 bits",
  ],
  [
    "null-paths",
    "equality to null through a list misses a document member lacking the field ({a.b: null} on {a: [{b: 3}, {}]}), $nin with null matches a missing field, and $gte/$lte null match nothing",
  ],
  [
    "elemmatch-values",
    "$elemMatch with conditions on the elements tests an element that is an array through its members ({$gte: 5} matches [[6]]) and accepts a path reaching a single value",
  ],
  [
    "type-operands",
    "$type refuses a list of types and the number 7 (objectId), and reads a fractional number (2.5) as its integer part",
  ],
  ["$expr-operators", "most aggregation operators inside $expr ($size, $range, $reduce) fail"],
  ["write-concern", "write concerns are not enforced: w: 2 on a single node succeeds"],
  [
    "array-sort",
    "a sort on a field holding arrays compares whole arrays (arrays after objects) instead of their smallest (ascending) or largest (descending) element",
  ],
  [
    "nested-array-equality",
    "an array equality ({x: []}, $in, $nin) does not match an element that is that array (x: [[]])",
  ],
]);

/** A running jongodb emulator. */
export interface Jongodb {
  /** Connection string, already carrying `directConnection=true`. */
  uri: string;
  stop(): Promise<void>;
}

/** Where the MongoDB tests connect. */
export interface MongoTestTarget extends Jongodb {
  /** True for jongodb (gaps apply), false for `MONGO_URI`. */
  emulator: boolean;
}

const BINARY = JONGODB_BINARY;
const START_TIMEOUT_MS = 15_000;
const TAIL_BYTES = 4096;

/** Adds `directConnection=true` unless the URI already sets it. */
function withDirectConnection(uri: string): string {
  if (/[?&]directConnection=/i.test(uri)) return uri;
  return uri + (uri.includes("?") ? "&" : "?") + "directConnection=true";
}

/** The last bytes of the emulator's output file (empty while there is none). */
function tailOf(path: string): string {
  try {
    return Deno.readTextFileSync(path).slice(-TAIL_BYTES);
  } catch {
    return "";
  }
}

/** Starts jongodb on a free loopback port and waits for it to announce its URI. */
export async function startJongodb(): Promise<Jongodb> {
  const bin = Deno.env.get("JONGODB_BIN") ?? BINARY.pathname;
  try {
    await Deno.stat(bin);
  } catch {
    throw new Error(`jongodb binary not found at ${bin}: run \`deno install\` first`);
  }
  const port = freePort();
  // The emulator writes its output to a file, not a pipe: a pipe read for the emulator's
  // whole life would be an operation in flight across every test (the op sanitizer's
  // business), and an unread pipe would block the emulator once full.
  const log = await Deno.makeTempFile({ prefix: "restsvc-jongodb-", suffix: ".log" });
  const child = new Deno.Command("sh", {
    args: ["-c", 'exec "$0" "$@" >"$JONGODB_LOG" 2>&1', bin, "--host=127.0.0.1", `--port=${port}`],
    env: { JONGODB_LOG: log },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();

  let watching = true;
  const uriSeen = (async () => {
    while (watching) {
      const line = tailOf(log).split("\n").find((l) => l.startsWith("JONGODB_URI="));
      if (line) return line.slice("JONGODB_URI=".length).trim();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return new Promise<string>(() => {});
  })();

  let timer: ReturnType<typeof setTimeout> | undefined;
  const failure = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`jongodb did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    child.status.then((s) =>
      reject(new Error(`jongodb exited with code ${s.code} before starting: ${tailOf(log)}`))
    );
  });
  failure.catch(() => {});

  // Never leave the emulator running when the test process ends without calling stop().
  const killOnUnload = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
  };
  globalThis.addEventListener("unload", killOnUnload);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    globalThis.removeEventListener("unload", killOnUnload);
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    await child.status;
    await Deno.remove(log).catch(() => {});
  };

  try {
    const uri = await Promise.race([uriSeen, failure]);
    return { uri: withDirectConnection(uri), stop };
  } catch (e) {
    await stop();
    throw e;
  } finally {
    watching = false;
    clearTimeout(timer);
  }
}

/** The MongoDB target of this test process: started on first use, stopped at unload. */
export const sharedMongoTarget: () => Promise<MongoTestTarget> = processShared(() => mongoTarget());

/**
 * The MongoDB server for tests: `MONGO_URI` when set (a real server, no gaps), else a
 * freshly started jongodb.
 */
export async function mongoTarget(): Promise<MongoTestTarget> {
  const uri = Deno.env.get("MONGO_URI");
  if (uri) return { uri, emulator: false, stop: () => Promise.resolve() };
  const server = await startJongodb();
  return { ...server, emulator: true };
}
