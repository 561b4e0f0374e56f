/**
 * The home endpoint: a link to every public resource (an empty body with HATEOAS off), and
 * under the INFO key (when set) what serves the API.
 */
import { methodNotAllowed } from "../services/errors.ts";
import { isRead, READ_ONLY_ALLOW } from "../domain/methods.ts";
import type { Reply, Runtime } from "../services/runtime.ts";

/**
 * The home endpoint's answer; as in Eve, `on_post_GET` is raised with no resource. `links`
 * are added beside `child` (the API description's `service-desc` and `service-doc`).
 */
export async function homeRoute(
  rt: Runtime,
  options: { request: Request; method: string; links?: Record<string, unknown> },
): Promise<Reply> {
  const { request, method } = options;
  const reply = homeReply(rt, method, options.links ?? {});
  if (isRead(method)) {
    await rt.events.emit("on_post_GET", null, request, reply);
  }
  return reply;
}

function homeReply(rt: Runtime, method: string, links: Record<string, unknown>): Reply {
  if (method === "OPTIONS") return { status: 200, headers: { allow: READ_ONLY_ALLOW } };
  if (!isRead(method)) {
    throw methodNotAllowed(["GET", "HEAD"]);
  }
  const body: Record<string, unknown> = {};
  const info = rt.settings.INFO;
  if (info) {
    // As in Eve: `server` and `version` name the Eve API served, `api_version` API_VERSION.
    const about: Record<string, string> = { server: "Eve", version: EVE_VERSION };
    if (rt.settings.API_VERSION) about.api_version = rt.settings.API_VERSION;
    body[info] = about;
  }
  if (!rt.settings.HATEOAS) return { status: 200, body };
  const child = [...rt.domain.values()].filter((r) => !r.internal)
    .map((r) => ({ href: r.url, title: r.resourceTitle }));
  const schema = rt.settings.SCHEMA_ENDPOINT;
  if (schema) child.push({ href: schema, title: schema });
  body[rt.settings.LINKS] = { child, ...links };
  return { status: 200, body };
}

/** The Eve release whose API the service implements (INFO's `version`). */
const EVE_VERSION = "2.3.1";
