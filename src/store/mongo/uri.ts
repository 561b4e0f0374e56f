/**
 * Connection settings for the MongoDB store: URI building, database name resolution and
 * password redaction for messages.
 */

/** How to reach MongoDB. `uri` wins over the individual parts. */
export interface MongoOptions {
  uri?: string;
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  authSource?: string;
  /** Database to use; defaults to the one named in `uri`, else `"eve"`. */
  dbName?: string;
  /** Extra `MongoClient` options, e.g. `{ directConnection: true }`. */
  options?: Record<string, unknown>;
  /** `maxTimeMS` of every read and aggregation (QUERY_TIMEOUT_MS); 0 or absent: none. */
  queryTimeoutMs?: number;
  /**
   * Write concerns by collection (a resource's `mongo_write_concern`), over the client's
   * (MONGO_WRITE_CONCERN) for every write to that collection.
   */
  writeConcerns?: Record<string, Record<string, unknown>>;
}

/** The resolved connection target. */
export interface MongoTarget {
  uri: string;
  dbName: string;
  /** The URI with any password replaced by `***`, safe for logs and errors. */
  redacted: string;
}

const DEFAULT_DB = "eve";

/** Resolves `options` into a connection URI and database name. */
export function resolveTarget(options: MongoOptions): MongoTarget {
  let uri: string;
  let uriDb: string | undefined;
  if (options.uri) {
    uri = options.uri;
    uriDb = databaseFromUri(uri);
  } else {
    uri = buildUri(options);
  }
  const dbName = options.dbName || uriDb || DEFAULT_DB;
  return { uri, dbName, redacted: redactUri(uri) };
}

function buildUri(options: MongoOptions): string {
  const host = options.host || "localhost";
  const port = options.port ?? 27017;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new RangeError(`invalid MongoDB port: ${port}`);
  }
  let credentials = "";
  if (options.username) {
    credentials = encodeURIComponent(options.username);
    if (options.password !== undefined) {
      credentials += ":" + encodeURIComponent(options.password);
    }
    credentials += "@";
  }
  // IPv6 literals need brackets in a URI authority.
  const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  // The database is not put in the path: it would become the default authSource.
  let uri = `mongodb://${credentials}${hostPart}:${port}/`;
  if (options.authSource) uri += `?authSource=${encodeURIComponent(options.authSource)}`;
  return uri;
}

/** The database named in the path of a `mongodb://` or `mongodb+srv://` URI, if any. */
export function databaseFromUri(uri: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?#]*)/.exec(uri);
  if (!match || !match[1]) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

/** Replaces the password in a URI's userinfo with `***`. */
export function redactUri(uri: string): string {
  return uri.replace(/^([a-z+]+:\/\/[^:@/]*):[^@/]*@/i, "$1:***@");
}

/** Removes every occurrence of `secret` (raw and URL-encoded) from `text`. */
export function scrubSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  let out = text.split(secret).join("***");
  const encoded = encodeURIComponent(secret);
  if (encoded !== secret) out = out.split(encoded).join("***");
  return out;
}

/** The password contained in `options`, either given directly or inside the URI. */
export function passwordOf(options: MongoOptions): string | undefined {
  if (options.password) return options.password;
  if (!options.uri) return undefined;
  const match = /^[a-z+]+:\/\/[^:@/]*:([^@/]*)@/i.exec(options.uri);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}
