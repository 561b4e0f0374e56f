/** The home endpoint: a link to every public resource (an empty body with HATEOAS off). */
import { HttpError } from "../http/errors.ts";
import type { Reply, Runtime } from "../services/runtime.ts";

export function homeRoute(rt: Runtime, method: string): Reply {
  if (method === "OPTIONS") return { status: 200, headers: { allow: "GET, HEAD, OPTIONS" } };
  if (method !== "GET" && method !== "HEAD") {
    throw new HttpError(405, "The method is not allowed for the requested URL.", {
      headers: { allow: "GET, HEAD, OPTIONS" },
    });
  }
  if (!rt.settings.HATEOAS) return { status: 200, body: {} };
  const child = [...rt.domain.values()].filter((r) => !r.internal)
    .map((r) => ({ href: r.url, title: r.resourceTitle }));
  return { status: 200, body: { [rt.settings.LINKS]: { child } } };
}
