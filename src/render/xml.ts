/**
 * XML rendering of response bodies in Eve's layout:
 * - the root `<resource>` takes `href`/`title` from `_links.self`;
 * - other links become `<link rel="..." href="..." title="..."/>` (sorted by rel), except
 *   `_links.related`, whose entries become `href`/`title` attributes of the field elements;
 * - `_meta` becomes `<_meta>` with its keys sorted;
 * - collection items are `<resource>` children, each laid out like the root;
 * - other fields are elements in key order (sorted, as Eve does), nested dicts nest,
 *   lists repeat the element, null is an empty element.
 * Unlike Eve, keys of a collection body other than `_items`/`_links`/`_meta` (e.g. `_status`,
 * `_error` of a bulk response) are kept, before the items.
 */
import { XMLBuilder } from "fast-xml-parser";
import type { RenderOptions } from "./json.ts";
import { toPlain } from "./convert.ts";
import { getOwn, setOwn } from "../domain/keys.ts";

type Node = Record<string, unknown>;
type Plain = Record<string, unknown>;

const builder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  suppressEmptyNode: true,
  processEntities: true,
});
const prettyBuilder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  suppressEmptyNode: true,
  processEntities: true,
  format: true,
  indentBy: "    ",
});

const LINKS = "_links";
const META = "_meta";
const ITEMS = "_items";

/** Renders a body as Eve-style XML (`pretty` indents). */
export function renderXml(body: unknown, opts: RenderOptions): string {
  let data = toPlain(body, opts.formatDate);
  if (Array.isArray(data)) data = { [ITEMS]: data };
  const root = isObject(data) ? resource(data, true) : element("resource", [text(data)]);
  const xml = (opts.pretty ? prettyBuilder : builder).build([root]) as string;
  return xml.trim();
}

/** A `<resource>` element: self attributes, links, meta, then items or fields. */
function resource(data: Plain, root: boolean): Node {
  const links = isObject(data[LINKS]) ? data[LINKS] as Plain : {};
  const children: Node[] = linkNodes(links, true);
  const meta = data[META];
  if (isObject(meta)) {
    const metaChildren = sortedKeys(meta).map((k) => element(tagName(k), content(meta[k])));
    children.push(element(META, metaChildren));
  }
  const items = root ? data[ITEMS] : undefined;
  const rest: Plain = {};
  for (const [k, v] of Object.entries(data)) {
    if (k === LINKS || k === META || (Array.isArray(items) && k === ITEMS)) continue;
    setOwn(rest, k, v);
  }
  // Appends one by one: a spread of a long list overflows the call stack.
  for (const node of fields(rest, relatedOf(links))) children.push(node);
  if (Array.isArray(items)) {
    for (const item of items) {
      children.push(isObject(item) ? resource(item, false) : element("resource", [text(item)]));
    }
  }
  return element("resource", children, selfAttributes(links));
}

function selfAttributes(links: Plain): Record<string, string> | undefined {
  const self = links.self;
  if (!isObject(self)) return undefined;
  const attrs: Record<string, string> = {};
  if (self.href !== undefined) attrs.href = String(self.href);
  if (self.title !== undefined) attrs.title = String(self.title);
  return attrs;
}

/**
 * `<link>` elements for every relation except `related` (and `self` when it became the
 * attributes of a `<resource>`; nested documents keep it as a `<link rel="self">`).
 */
function linkNodes(links: Plain, skipSelf: boolean): Node[] {
  const out: Node[] = [];
  for (const rel of sortedKeys(links)) {
    if ((skipSelf && rel === "self") || rel === "related") continue;
    const value = links[rel];
    for (const link of Array.isArray(value) ? value : [value]) {
      if (isObject(link)) out.push(element("link", [], linkAttributes(rel, link)));
    }
  }
  return out;
}

function linkAttributes(rel: string, link: Plain): Record<string, string> {
  const attrs: Record<string, string> = { rel };
  if (link.href !== undefined) attrs.href = String(link.href);
  if (link.title !== undefined) attrs.title = String(link.title);
  return attrs;
}

function relatedOf(links: Plain): Plain {
  return isObject(links.related) ? links.related : {};
}

/** Field elements of a dict, sorted by key; lists repeat the element. */
function fields(data: Plain, related: Plain): Node[] {
  const out: Node[] = [];
  for (const key of sortedKeys(data)) {
    const value = data[key];
    const values = Array.isArray(value) ? value : [value];
    const rel = getOwn(related, key);
    values.forEach((v, idx) => {
      const link = Array.isArray(rel) ? rel[idx] : rel;
      const attrs = isObject(link) ? linkAttributes("", link) : undefined;
      if (attrs) delete attrs.rel;
      out.push(element(tagName(key), content(v), attrs));
    });
  }
  return out;
}

/** Children of one field element. */
function content(v: unknown): Node[] {
  if (isObject(v)) {
    const links = isObject(v[LINKS]) ? v[LINKS] as Plain : {};
    const rest: Plain = { ...v };
    delete rest[LINKS];
    const out = fields(rest, relatedOf(links));
    for (const node of linkNodes(links, false)) out.push(node);
    return out;
  }
  // A list inside a list (GeoJSON coordinates): repeated <item> elements.
  if (Array.isArray(v)) return v.map((x) => element("item", content(x)));
  return v === null || v === undefined ? [] : [text(v)];
}

function element(tag: string, children: Node[], attrs?: Record<string, string>): Node {
  const node: Node = { [tag]: children };
  if (attrs && Object.keys(attrs).length > 0) {
    const a: Record<string, string> = {};
    for (const [k, v] of Object.entries(attrs)) a[`@_${k}`] = cleanText(v);
    node[":@"] = a;
  }
  return node;
}

function text(v: unknown): Node {
  return { "#text": cleanText(typeof v === "string" ? v : String(v)) };
}

// deno-lint-ignore no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Characters XML 1.0 cannot carry at all (and lone surrogates) are replaced with U+FFFD. */
function cleanText(s: string): string {
  return s.toWellFormed().replace(INVALID_XML_CHARS, "\uFFFD");
}

/** A key that is an element name as it is: ASCII name characters and no `_x`. */
const PLAIN_NAME = /^(?!.*_x)[A-Za-z_][A-Za-z0-9_.-]*$/;
/**
 * XML 1.0's NameStartChar (fifth edition) without `:` (namespaces) and without characters
 * beyond the Basic Multilingual Plane, which some parsers still refuse in names.
 */
const NAME_START =
  /^[A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]$/u;
/** What XML 1.0's NameChar adds to NameStartChar. */
const NAME_MORE = /^[-.0-9\u00B7\u0300-\u036F\u203F\u2040]$/u;

/**
 * The XML element name of a field key. Names are encoded as .NET's `XmlConvert.EncodeName`
 * does, so that two keys never share an element name: a character that cannot stand where it
 * is becomes `_xHHHH_` (its code point in hex, at least four digits), an underscore followed
 * by `x` becomes `_x005F_`, and the empty key is `_x_`. Keys made of ASCII name characters
 * without `_x` (nearly all) are unchanged.
 */
export function tagName(key: string): string {
  if (PLAIN_NAME.test(key)) return key;
  if (key === "") return "_x_";
  let name = "";
  let first = true;
  let previous = "";
  for (const ch of key) {
    const fits = NAME_START.test(ch) || (!first && NAME_MORE.test(ch));
    if (fits && !(previous === "_" && ch === "x")) name += ch;
    else if (fits) name = `${name.slice(0, -1)}_x005F_x`;
    else name += `_x${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}_`;
    previous = fits ? ch : "";
    first = false;
  }
  return name;
}

/** The keys of `o`'s members, sorted; an `undefined` member is absent, as in JSON. */
function sortedKeys(o: Plain): string[] {
  return Object.keys(o).filter((k) => o[k] !== undefined).sort();
}

function isObject(v: unknown): v is Plain {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
