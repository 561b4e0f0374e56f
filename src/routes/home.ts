/** The home endpoint: a link to every public resource (an empty body with HATEOAS off). */
import { methodNotAllowed } from "../services/errors.ts";
import { isRead } from "../domain/methods.ts";
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
  if (method === "OPTIONS") return { status: 200, headers: { allow: "GET, HEAD, OPTIONS" } };
  if (!isRead(method)) {
    throw methodNotAllowed(["GET", "HEAD"]);
  }
  if (!rt.settings.HATEOAS) return { status: 200, body: {} };
  const child = [...rt.domain.values()].filter((r) => !r.internal)
    .map((r) => ({ href: r.url, title: r.resourceTitle }));
  const schema = rt.settings.SCHEMA_ENDPOINT;
  if (schema) child.push({ href: schema, title: schema });
  return { status: 200, body: { [rt.settings.LINKS]: { child, ...links } } };
}
