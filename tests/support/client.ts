/** A small HTTP client for scenarios: real requests, parsed answers. */

/**
 * A parsed JSON body: scenarios read into it freely, and a wrong read fails the assertion
 * that follows, which is the check a narrower type would give.
 */
// deno-lint-ignore no-explicit-any -- see above: answers are read by assertions, not trusted
export type Json = any;

export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text ("" when empty). */
  body: Json;
  text: string;
}

export type Body = unknown;

/** What {@link Client.observe} is shown of each exchange. */
export interface Observed extends Answer {
  method: string;
  url: URL;
  requestHeaders: Headers;
}

export class Client {
  /** Called with every answer before it is returned; what it throws fails the request. */
  observe?: (exchange: Observed) => void;

  constructor(readonly base: string) {}

  async request(
    method: string,
    path: string,
    options: { body?: Body; headers?: Record<string, string>; raw?: BodyInit } = {},
  ): Promise<Answer> {
    const headers = new Headers(options.headers);
    let body: BodyInit | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const url = new URL(path.replace(/^\//, ""), this.base);
    const response = await fetch(url, {
      method,
      headers,
      body,
    });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get("content-type") ?? "").includes("json") && text) {
      parsed = JSON.parse(text);
    }
    const answer = { status: response.status, headers: response.headers, body: parsed, text };
    this.observe?.({ ...answer, method, url, requestHeaders: headers });
    return answer;
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request("GET", path, { headers });
  }
  head(path: string, headers?: Record<string, string>) {
    return this.request("HEAD", path, { headers });
  }
  post(path: string, body: Body, headers?: Record<string, string>) {
    return this.request("POST", path, { body, headers });
  }
  patch(path: string, body: Body, headers?: Record<string, string>) {
    return this.request("PATCH", path, { body, headers });
  }
  put(path: string, body: Body, headers?: Record<string, string>) {
    return this.request("PUT", path, { body, headers });
  }
  delete(path: string, headers?: Record<string, string>) {
    return this.request("DELETE", path, { headers });
  }

  /** POSTs `doc` and returns the write response; throws unless 201. */
  async create(path: string, doc: Body): Promise<Json> {
    const res = await this.post(path, doc);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
    return res.body;
  }
}
