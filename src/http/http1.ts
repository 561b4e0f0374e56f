/**
 * HTTP/1.1 message syntax for the server's own connections (RFC 9112): request heads in,
 * response status lines out. Stricter than the RFC wherever leniency would let one request be
 * read two ways (request smuggling): bare CR or LF, folded lines, space before a colon,
 * Content-Length with Transfer-Encoding, unequal lengths and codings other than `chunked` are
 * all refused.
 */

/** A request head, parsed. */
export interface RequestHead {
  method: string;
  /** The request target as sent (origin or absolute form). */
  target: string;
  /** HTTP/1.0 (0) or HTTP/1.1 (1). */
  minor: 0 | 1;
  /** Header fields in order, names lowercased (as `Headers` keeps them), values trimmed. */
  headers: [string, string][];
  /** The Host field, or null when there is none (HTTP/1.0). */
  host: string | null;
  /** Body framing: a byte count (0: none), or -1 for chunked. */
  length: number;
  /** Whether the client lets the connection stay open after the answer. */
  keepAlive: boolean;
  /** `Expect: 100-continue`: the client waits for a 100 before sending the body. */
  expectContinue: boolean;
}

/** Why a head was refused: the status to answer before closing the connection. */
export interface Refusal {
  refuse: 400 | 431;
}

/** Header fields past this count answer 431 (as hyper, behind `Deno.serve`, does). */
export const MAX_HEADER_FIELDS = 100;

const REQUEST_LINE = /^([A-Z]+) ([\x21-\x7e]+) HTTP\/1\.([01])$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD: Refusal = { refuse: 400 };
const STRAY = /\r(?!\n)|(?<!\r)\n|\0/;

/**
 * Parses a request head: `text` is its bytes as latin1, without the blank line that ends it.
 */
export function parseHead(text: string): RequestHead | Refusal {
  // A CR or LF not in a CRLF, or a NUL, anywhere: refused (one pass instead of one per line).
  if (STRAY.test(text)) return BAD;
  const lines = text.split("\r\n");
  const line = REQUEST_LINE.exec(lines[0]);
  if (!line) return BAD;
  if (lines.length - 1 > MAX_HEADER_FIELDS) return { refuse: 431 };
  const minor = line[3] === "1" ? 1 : 0;
  const headers: [string, string][] = [];
  let host: string | null = null;
  let length: string | null = null;
  let codings = 0;
  let chunked = false;
  let keepAlive = minor === 1;
  let expectContinue = false;
  for (let i = 1; i < lines.length; i++) {
    const field = lines[i];
    const colon = field.indexOf(":");
    if (colon <= 0) return BAD;
    const sent = field.slice(0, colon);
    // Bare CR/LF inside a line, folded lines and space before the colon fail here.
    if (!TOKEN.test(sent)) return BAD;
    const name = sent.toLowerCase();
    const value = trimOws(field.slice(colon + 1));
    headers.push([name, value]);
    switch (name.length) {
      case 4:
        if (name === "host") {
          if (host !== null) return BAD;
          host = value;
        }
        break;
      case 6:
        if (name === "expect") {
          expectContinue = minor === 1 && value.toLowerCase() === "100-continue";
        }
        break;
      case 10:
        if (name === "connection") {
          for (const token of value.toLowerCase().split(",")) {
            const t = token.trim();
            if (t === "close") keepAlive = false;
            else if (t === "keep-alive" && minor === 0) keepAlive = true;
          }
        }
        break;
      case 14:
        if (name === "content-length") {
          if (length !== null && length !== value) return BAD;
          length = value;
        }
        break;
      case 17:
        if (name === "transfer-encoding") {
          codings++;
          chunked = value.toLowerCase() === "chunked";
        }
        break;
    }
  }
  if (minor === 1 && host === null) return BAD;
  let bodyLength = 0;
  if (codings > 0) {
    if (!chunked || codings > 1 || length !== null || minor === 0) return BAD;
    bodyLength = -1;
  } else if (length !== null) {
    const bytes = contentLength(length);
    if (bytes === null) return BAD;
    bodyLength = bytes;
  }
  return {
    method: line[1],
    target: line[2],
    minor,
    headers,
    host,
    length: bodyLength,
    keepAlive,
    expectContinue: expectContinue && bodyLength !== 0,
  };
}

const LENGTH = /^\d{1,15}$/;

/** A Content-Length value as a byte count, or null when it is not one (digits only). */
export function contentLength(value: string): number | null {
  return LENGTH.test(value) ? Number(value) : null;
}

const utf8 = new TextDecoder();

/**
 * ISO-8859-1: every byte is its own code point, as header bytes are in `Headers`. ASCII
 * (nearly every head) is decoded by V8's UTF-8 fast path: a text as long as its bytes with
 * no replacement character had no byte above 0x7F. (The Encoding standard's "latin1"
 * decoder is windows-1252, which differs for 0x80-0x9F, and is slower.)
 */
export function decodeLatin1(bytes: Uint8Array): string {
  const text = utf8.decode(bytes);
  if (text.length === bytes.length && !text.includes("\ufffd")) return text;
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}

/** Removes leading and trailing spaces and tabs (optional white space). */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) {
    end--;
  }
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * The URL of a request as `Request#url` gives it: origin-form targets are resolved against
 * the Host field (or `fallbackHost` without one); absolute-form targets are taken as they
 * are. Null for other forms (`*`, authority form), hosts that are not `host[:port]` and
 * URLs the URL parser refuses.
 */
export function requestUrl(head: RequestHead, fallbackHost: string): string | null {
  const { target } = head;
  if (target.charCodeAt(0) === 47 /* / */) {
    const origin = originOf(head.host ?? fallbackHost);
    if (origin === null) return null;
    // Most targets are already what the parser would make of them: no need to parse.
    if (PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target)) return origin + target;
    return href(origin + target);
  }
  if (/^https?:\/\//i.test(target)) return href(target);
  return null;
}

function href(url: string): string | null {
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
}

/**
 * Targets the URL parser leaves as they are: a path and query of characters it never
 * escapes or rewrites. Dot segments (and `%2e`, which may spell one) are left to the parser.
 */
const PLAIN_TARGET =
  /^\/[A-Za-z0-9\-._~!$&()*+,;=:@\/%]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@\/?%[\]{}|^`]*)?$/;
const DOT_SEGMENT = /\/\.|%2e/i;

/** The origin each `Host` value gives (null: none), for the last few values seen. */
const origins = new Map<string, string | null>();
const MAX_ORIGINS = 256;

/** The last `Host` seen and its origin: nearly every request repeats it. */
let lastHost = "";
let lastOrigin: string | null = null;

function originOf(host: string): string | null {
  if (host === lastHost) return lastOrigin;
  let origin = origins.get(host);
  if (origin === undefined) {
    origin = HOST.test(host) ? href(`http://${host}/`)?.slice(0, -1) ?? null : null;
    if (origins.size >= MAX_ORIGINS) origins.clear();
    origins.set(host, origin);
  }
  [lastHost, lastOrigin] = [host, origin];
  return origin;
}

/** A reg-name or IPv4 address or bracketed IPv6 address, with an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d{0,5})?$/;

/** Standard reason phrases: status lines, and the messages of error bodies (errors.ts). */
export const REASONS: Record<number, string> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Payload Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  422: "Unprocessable Entity",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

const STATUS_LINES = new Map<number, string>();

/** `HTTP/1.1 <status> <reason>\r\n`; `statusText` when the response gave one. */
export function statusLine(status: number, statusText: string): string {
  if (statusText) return `HTTP/1.1 ${status} ${statusText}\r\n`;
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\n`;
    if (status >= 100 && status <= 999) STATUS_LINES.set(status, line);
  }
  return line;
}
