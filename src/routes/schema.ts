/**
 * The schema endpoint (SCHEMA_ENDPOINT): `GET /<name>` answers every visible resource's
 * validation schema indexed by resource name, `GET /<name>/<resource>` one of them.
 * Read-only: GET, HEAD and OPTIONS.
 */
import { methodNotAllowed, notFound } from "../services/errors.ts";
import { isRead, READ_ONLY_ALLOW } from "../domain/methods.ts";
import type { Resource } from "../domain/types.ts";
import type { Doc } from "../store/store.ts";
import type { Reply, Runtime } from "../services/runtime.ts";
import { accountOf } from "../auth/types.ts";
import { canRead } from "../services/policy.ts";

const ALLOWED = READ_ONLY_ALLOW;

/**
 * Whether `request` may see `resource`'s schema: never for internal resources. This is the
 * one place that decides; authentication adds its read check here.
 */
export function schemaVisible(rt: Runtime, resource: Resource, request: Request): boolean {
  if (resource.internal) return false;
  return canRead(rt, accountOf(request), resource);
}

/** The resource name a schema endpoint path addresses: "" for all, null when not ours. */
export function schemaTarget(rt: Runtime, path: string): string | null {
  const name = rt.settings.SCHEMA_ENDPOINT;
  if (!name) return null;
  if (path === name) return "";
  return path.startsWith(name + "/") ? path.slice(name.length + 1) : null;
}

/** Answers a request for the schema endpoint; `target` comes from {@link schemaTarget}. */
export function schemaRoute(
  rt: Runtime,
  options: { target: string; request: Request; method: string },
): Reply {
  const { target, request, method } = options;
  if (method === "OPTIONS") return { status: 200, headers: { allow: ALLOWED } };
  if (!isRead(method)) {
    throw methodNotAllowed(ALLOWED.split(", "));
  }
  if (target === "") {
    const body: Doc = Object.create(null);
    for (const resource of rt.domain.values()) {
      if (schemaVisible(rt, resource, request)) body[resource.name] = shownSchema(resource);
    }
    return { status: 200, body: { ...body } };
  }
  const resource = rt.domain.get(target);
  if (!resource || !schemaVisible(rt, resource, request)) throw notFound();
  return { status: 200, body: shownSchema(resource) };
}

/** A resource's schema as Eve shows it: the id field listed (`objectid` unless declared). */
function shownSchema(resource: Resource): Doc {
  if (Object.hasOwn(resource.schema, resource.idField)) return resource.schema;
  return { ...resource.schema, [resource.idField]: { type: "objectid" } };
}
