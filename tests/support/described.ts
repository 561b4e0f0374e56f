/**
 * Checks answers against the service's own API description: the status must be one the
 * operation lists (or its `4XX`/`5XX` range), the media type one the response lists, a JSON
 * body must match the response's schema, and documented headers must be present when
 * required and match their schemas. The scenario harness runs every answer of every
 * scenario through it, so the description cannot drift from what the service answers.
 *
 * Validators are compiled once per description (the same settings give the same
 * description) and each response schema on first use.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import type { Json } from "./client.ts";

const VERBS = new Set(["get", "head", "post", "put", "patch", "delete"]);

/** What the checker is told of one exchange. */
export interface Exchange {
  method: string;
  /** The request URL. */
  url: URL;
  /** The request's headers (a POST's X-HTTP-Method-Override names the method answered). */
  requestHeaders?: Headers;
  status: number;
  headers: Headers;
  /** The parsed JSON body, or the text. */
  body: unknown;
  text: string;
}

interface Route {
  template: string;
  regex: RegExp;
  names: string[];
  literals: number;
}

/** One description, ready to check answers. */
export class DescribedApi {
  private readonly ajv: InstanceType<typeof Ajv2020>;
  private readonly routes: Route[];
  private readonly base: string;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly patterns = new Map<string, RegExp>();

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
    this.ajv.addSchema({ ...doc, $id: "api" });
    const server = doc.servers?.[0]?.url ?? "/";
    this.base = new URL(server, "http://host/").pathname.replace(/\/$/, "");
    this.routes = Object.keys(doc.paths).map((template) => {
      const names: string[] = [];
      const source = template.split("/").map((segment) => {
        const m = /^\{(.+)\}$/.exec(segment);
        if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(m[1]);
        return "([^/]+)";
      }).join("/");
      const literals = template.split("/").filter((s) => s && !s.startsWith("{")).length;
      return { template, regex: new RegExp(`^${source}/?$`), names, literals };
    }).sort((a, b) => b.literals - a.literals);
  }

  /** The problems of one answer (empty when the description allows it). */
  check(x: Exchange): string[] {
    const override = x.method === "POST" ? x.requestHeaders?.get("x-http-method-override") : null;
    const method = (override || x.method).toLowerCase();
    if (!VERBS.has(method)) return [];
    let path = x.url.pathname;
    if (this.base && !path.startsWith(this.base)) return [];
    path = path.slice(this.base.length) || "/";
    const found = this.operation(path, method);
    const where = `${x.method} ${x.url.pathname}${x.url.search} → ${x.status}`;
    if (!found) {
      // A described path, a method it does not enable: an error with the error envelope.
      // Other paths (unknown ones, the probes, the description and docs page themselves)
      // are not the description's.
      if (!this.routes.some((r) => r.regex.test(path))) return [];
      if (x.status < 400) return [`${where}: a ${x.method} answer the description lacks`];
      if (!this.isJson(x)) return [];
      return this.body(x, "/components/schemas/Error").map((p) => `${where}: ${p}`);
    }
    const { op, pointer } = found;
    const key = [String(x.status), `${String(x.status)[0]}XX`, "default"]
      .find((k) => Object.hasOwn(op.responses ?? {}, k));
    if (!key) {
      return [`${where}: status not described for ${x.method} ${found.template}`];
    }
    let response = op.responses[key];
    let at = `${pointer}/responses/${escape(key)}`;
    if (response.$ref) {
      at = response.$ref.slice(1);
      response = this.resolve(response.$ref);
    }
    const problems: string[] = [];
    for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
      const h = header.$ref ? this.resolve(header.$ref) : header;
      const value = x.headers.get(name);
      if (value === null) {
        if (h.required) problems.push(`required header ${name} missing`);
        continue;
      }
      if (h.schema) {
        const v = this.validator(`${at}/headers/${escape(name)}/schema`);
        if (!v(value)) problems.push(`header ${name}: ${this.ajv.errorsText(v.errors)}`);
      }
    }
    const type = (x.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    const empty = x.text === "";
    if (method === "head" || x.status === 204 || x.status === 304) {
      if (!empty) problems.push("a body where none is allowed");
    } else if (!response.content) {
      if (!empty) problems.push(`a body (${type || "no type"}) where the description has none`);
    } else if (!mediaType(response.content, type)) {
      if (!empty || type) {
        problems.push(
          `media type "${type}" not among ${Object.keys(response.content).join(", ")}`,
        );
      }
    } else if (type === "application/json" && !empty && response.content[type]) {
      problems.push(...this.body(x, `${at}/content/${escape(type)}/schema`));
    }
    return problems.map((p) => `${where}: ${p}`);
  }

  private isJson(x: Exchange): boolean {
    return (x.headers.get("content-type") ?? "").includes("json") && x.text !== "";
  }

  private body(x: Exchange, pointer: string): string[] {
    const v = this.validator(pointer);
    if (v(x.body)) return [];
    const errors = (v.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || "/"} ${e.message}`);
    return [`body does not match ${pointer}: ${errors.join("; ")}; body ${x.text.slice(0, 300)}`];
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.validators.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `api#${pointer}` });
      this.validators.set(pointer, v);
    }
    return v;
  }

  private resolve(ref: string): Json {
    return ref.slice(2).split("/").map(unescape).reduce((at: Json, k: string) => at?.[k], this.doc);
  }

  /** The operation answering `method` at `path`, the most literal template first. */
  private operation(
    path: string,
    method: string,
  ): { op: Json; pointer: string; template: string } | null {
    let fallback: { op: Json; pointer: string; template: string } | null = null;
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      const item = this.doc.paths[route.template];
      const op = item[method];
      if (!op) continue;
      const pointer = `/paths/${escape(route.template)}/${method}`;
      const found = { op, pointer, template: route.template };
      if (this.parametersMatch(op, route, m)) return found;
      fallback ??= found;
    }
    return fallback;
  }

  /** Whether the path's values fit the operation's path parameters' patterns. */
  private parametersMatch(op: Json, route: Route, m: RegExpExecArray): boolean {
    for (const [i, name] of route.names.entries()) {
      const param = (op.parameters ?? []).map((p: Json) => p.$ref ? this.resolve(p.$ref) : p)
        .find((p: Json) => p.in === "path" && p.name === name);
      const schema = param?.schema ?? {};
      const sources: string[] = [
        schema.pattern,
        ...(schema.anyOf ?? []).map((s: Json) => s.pattern),
      ]
        .filter((s): s is string => typeof s === "string");
      if (!sources.length) continue;
      let value: string;
      try {
        value = decodeURIComponent(m[i + 1]);
      } catch {
        return false;
      }
      if (!sources.some((s) => this.pattern(s).test(value))) return false;
    }
    return true;
  }

  private pattern(source: string): RegExp {
    let re = this.patterns.get(source);
    if (!re) {
      try {
        re = new RegExp(source, "u");
      } catch {
        re = /[^]*/; // a pattern JavaScript cannot read: not checked here
      }
      this.patterns.set(source, re);
    }
    return re;
  }
}

/** Whether `type` is one of `content`'s media types (`*\/*` and `text/*` included). */
function mediaType(content: Json, type: string): boolean {
  if (Object.hasOwn(content, type) || Object.hasOwn(content, "*/*")) return true;
  return Object.hasOwn(content, `${type.split("/")[0]}/*`);
}

const escape = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");
const unescape = (key: string) => key.replace(/~1/g, "/").replace(/~0/g, "~");

const compiled = new Map<string, DescribedApi>();

/** The checker of `doc`, shared by every service started with the same description. */
export function describedApi(doc: Json): DescribedApi {
  const key = JSON.stringify(doc);
  let api = compiled.get(key);
  if (!api) {
    api = new DescribedApi(doc);
    compiled.set(key, api);
  }
  return api;
}
