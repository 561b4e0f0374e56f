/**
 * The operation log's resource. As in Eve, the oplog is a DOMAIN resource named OPLOG_NAME
 * on the OPLOG_NAME collection: internal (reachable in-process only) unless OPLOG_ENDPOINT
 * names its URL, and read-only either way. A DOMAIN entry of that name customises it like
 * any resource (cache control, paging, titles ...); its methods, source and schema are
 * fixed.
 */
import type { Settings } from "../settings/check.ts";
import type { Doc } from "../doc/types.ts";

/** The schema of oplog entries (for filters and the schema endpoint). */
export const OPLOG_SCHEMA: Doc = {
  o: { type: "string" },
  r: { type: "string" },
  i: {},
  c: { type: "dict", allow_unknown: true },
  ip: { type: "string" },
  u: {},
  extra: {},
};

/** Adds the oplog resource to `settings.DOMAIN` when OPLOG is on. */
export function addOplogResource(settings: Settings): void {
  if (settings.OPLOG !== true) return;
  const domain = settings.DOMAIN as Record<string, Doc>;
  const name = settings.OPLOG_NAME;
  const endpoint = settings.OPLOG_ENDPOINT;
  const given = domain[name] ?? {};
  const datasource: Doc = { ...(given.datasource as Doc | undefined), source: name };
  const hidden: Doc = {};
  if (!settings.OPLOG_RETURN_EXTRA_FIELD) {
    // An inclusive projection: a client's `projection={"extra": 1}` can't reveal it either,
    // nor can a filter on it.
    const fields = Object.keys(OPLOG_SCHEMA).filter((f) => f !== "extra");
    datasource.projection = Object.fromEntries(fields.map((f) => [f, 1]));
    const meta = [settings.ID_FIELD, settings.DATE_CREATED, settings.DATE_UPDATED, settings.ETAG];
    hidden.allowed_filters = [...fields, ...(meta as string[])];
  }
  domain[name] = {
    ...hidden,
    ...given,
    url: endpoint ?? name,
    internal_resource: !endpoint,
    resource_methods: ["GET"],
    item_methods: ["GET"],
    datasource,
    schema: OPLOG_SCHEMA,
    allow_unknown: true,
    soft_delete: false,
    versioning: false,
  };
}
