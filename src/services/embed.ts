/**
 * Embedded resource serialization: `embedded={"author": 1}` replaces reference values
 * with the referenced documents. One query per relation per page, never one per document.
 */
import { expandMedia } from "./media.ts";
import { parseEmbedded } from "../query/paging.ts";
import { canonicalEjson } from "../doc/bson.ts";
import { isSimpleValue } from "../doc/match/engine.ts";
import type { DataRelation, Resource } from "../domain/types.ts";
import type { FieldAt } from "../domain/schema.ts";
import { softDeleteOf } from "./soft-delete.ts";
import {
  refById,
  referencedVersions,
  versionKey,
  type VersionRef,
  versionRef,
  withCurrentFields,
} from "./versions.ts";
import type { Doc, Filter, Projection } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import { defaultProjection, policyFilter } from "./policy.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { ServiceError } from "./errors.ts";
import { showable } from "./visible.ts";

/** The data relation a field (or the members of a list field) points through, if any. */
export function relationOf(field: FieldAt): DataRelation | undefined {
  if (!field || field === "free") return undefined;
  return field.relation ?? field.member?.relation;
}

/** Which fields a request embeds: defaults plus `{f: 1}`, minus `{f: 0}`. */
export function requestedFields(rt: Runtime, ctx: RequestContext): string[] {
  const raw = ctx.query.get(rt.settings.QUERY_EMBEDDED);
  const { resource } = ctx;
  if (!resource.embedding) {
    // As in Eve, the request is answered without embedding anything.
    if (raw !== null && raw !== "") {
      rt.log.log("debug", "embedded ignored: embedding is off", { resource: resource.name });
    }
    return [];
  }
  if ((raw === null || raw === "") && resource.embeddedFields.length === 0) return [];
  const text = raw ?? "";
  // The same few parameter texts come back request after request: each is read once.
  let known = REQUESTED.get(resource);
  if (!known) REQUESTED.set(resource, known = new Map());
  const cached = known.get(text);
  if (cached) return cached;
  const asked = text !== "" ? parseEmbedded(text) : {};
  const fields = new Set(resource.embeddedFields);
  for (const [field, on] of Object.entries(asked)) {
    if (on) fields.add(field);
    else fields.delete(field);
  }
  // Parents first: `note.author` is embedded inside an already embedded `note`.
  const out = Object.freeze(
    [...fields].sort((a, b) => a.split(".").length - b.split(".").length),
  ) as string[];
  if (known.size >= MAX_REQUESTED_TEXTS) known.clear();
  if (text.length <= MAX_REQUESTED_TEXT) known.set(text, out);
  return out;
}

/** The fields asked for by each `embedded` text read lately, by resource. */
const REQUESTED = new WeakMap<Resource, Map<string, string[]>>();
/** How many texts a resource remembers (then it starts over) and the longest remembered. */
const MAX_REQUESTED_TEXTS = 64;
const MAX_REQUESTED_TEXT = 512;

/**
 * The data relation of `resource` at a dotted `options.path`, walking dicts and lists and,
 * through relations already crossed (`note.author`), the referenced resource's schema.
 */
function relationAt(
  rt: Runtime,
  resource: Resource,
  options: { path: string },
): DataRelation | undefined {
  const { path } = options;
  let model = resource.schemaModel;
  let rest = path.split(".");
  // The longest prefix still in `model` that is a relation leads into its target.
  for (let i = 1; i <= rest.length; i++) {
    const relation = relationOf(model.fieldAt(rest.slice(0, i).join(".")));
    if (i === rest.length) return relation;
    if (!relation) continue;
    const target = rt.domain.get(relation.resource);
    if (!target) return undefined;
    model = target.schemaModel;
    rest = rest.slice(i);
    i = 0;
  }
  return undefined;
}

/** What {@link eachSlot} does with each slot; the same object all the way down. */
interface SlotVisitor {
  /** Called with the container and key of each value. */
  visit(holder: Doc | unknown[], key: string | number): void;
}

/**
 * Calls `options.visit` with the container and key of every value at the path `segments`
 * in `node` (through lists).
 */
function eachSlot(node: unknown, segments: string[], options: SlotVisitor) {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      if (segments.length === 0) options.visit(node, i);
      else eachSlot(node[i], segments, options);
    }
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const [head, ...rest] = segments;
  const doc = node as Doc;
  if (!(head in doc)) return;
  if (rest.length === 0) {
    if (Array.isArray(doc[head])) eachSlot(doc[head], [], options);
    else options.visit(doc, head);
  } else eachSlot(doc[head], rest, options);
}

/**
 * Copies the list of references a top-level field (`segments` of one name) holds in each of
 * `docs` before its members are replaced: a read's documents may share their nested values
 * with the store (FindOptions.shared), only their top level is the read's own.
 */
function ownTopLevelLists(docs: Doc[], segments: string[]): void {
  if (segments.length !== 1) return;
  const [field] = segments;
  for (const doc of docs) {
    if (!Object.hasOwn(doc, field)) continue;
    const value = doc[field];
    if (Array.isArray(value)) doc[field] = value.slice();
  }
}

/** Counts the documents one response embeds (MAX_EMBEDDED_DOCUMENTS). */
interface EmbedBudget {
  count(n: number): void;
}

/**
 * The embedding budget of one response: past MAX_EMBEDDED_DOCUMENTS references to expand,
 * the request is refused (400) before any referenced document is read.
 */
function embedBudget(rt: Runtime): EmbedBudget {
  const limit = rt.settings.MAX_EMBEDDED_DOCUMENTS;
  let used = 0;
  return {
    count(n) {
      used += n;
      if (used > limit) {
        throw new ServiceError(
          "bad-request",
          `the response would embed more than ${limit} documents (MAX_EMBEDDED_DOCUMENTS): ` +
            "ask for fewer items (max_results) or embed fewer fields",
        );
      }
    },
  };
}

/**
 * The identity of a reference value: its canonical Extended JSON text (the same for two
 * values exactly when the store's equality holds for them, types included), written
 * directly (the library's writer built a wrapped copy of each value first).
 */
const keyOf = (value: unknown) => canonicalEjson(value);

/** Options of {@link embedDocuments}. */
export interface EmbedOptions {
  /** The documents whose references are expanded, in place. */
  docs: Doc[];
  /** The fields to embed; by default the ones the request asks for ({@link requestedFields}). */
  fields?: string[];
}

/** Expands the requested references in `options.docs`, in place. */
export async function embedDocuments(rt: Runtime, ctx: RequestContext, options: EmbedOptions) {
  const { docs, fields = requestedFields(rt, ctx) } = options;
  const budget = embedBudget(rt);
  for (const field of fields) {
    const relation = relationAt(rt, ctx.resource, { path: field });
    if (!relation || !relation.embeddable) {
      // As in Eve, a field that can't be embedded is left as it is.
      rt.log.log("debug", "embedded ignored: the field is not embeddable", {
        resource: ctx.resource.name,
        field,
      });
      continue;
    }
    const target = rt.domain.get(relation.resource);
    // Internal documents are never served over HTTP (the settings check refuses such an
    // embeddable relation; this guards relations named by a hook).
    if (!target || target.internal) continue;
    if (relation.version && target.versioning) {
      const relField = relation.field ?? target.idField;
      await embedVersions(rt, ctx, { target, field, relField, docs, budget });
      continue;
    }
    const relField = relation.field ?? target.idField;
    const slots: Array<[Doc | unknown[], string | number]> = [];
    const values = new Map<string, unknown>();
    const segments = field.split(".");
    const collect: SlotVisitor = {
      visit(holder, key) {
        const value = (holder as Record<string | number, unknown>)[key];
        if (value === null || value === undefined) return;
        slots.push([holder, key]);
        budget.count(1);
        values.set(keyOf(value), value);
      },
    };
    ownTopLevelLists(docs, segments);
    for (const doc of docs) eachSlot(doc, segments, collect);
    if (values.size === 0) continue;
    // The target's read policy: its filter, soft delete and default projection.
    // AUTH_FIELD on the target: only the requester's documents are embedded.
    const owner = ctx.internal ? undefined : rt.auth?.ownerFilter(target, ctx.account);
    const filter = andFilters(policyFilter(rt, target), owner, referenceFilter(relField, values));
    const found = await rt.store.collection(target.source).find(filter, {
      projection: withField(defaultProjection(rt, target), relField),
    });
    const byKey = new Map(found.map((d) => [keyOf(d[relField]), d]));
    // Keyed first: the reference field itself may be one the target does not show.
    showable(rt, target, found);
    // Media fields of embedded documents read as the target's own reads show them.
    await expandMedia(rt, target, { docs: found });
    for (const [holder, key] of slots) {
      const h = holder as Record<string | number, unknown>;
      h[key] = byKey.get(keyOf(h[key])) ?? null;
    }
  }
}

/**
 * What an item read's text depends on through the embedding of `fields`, besides the item's
 * own stored document and the runtime (its settings and domain), for the cache of returned
 * items' texts (services/read.ts): the fields, and the change mark (Store.changeMark) of each
 * collection the embedded documents are read from, as one text. Undefined when the embedding
 * may differ between two requests of the same documents (a target whose documents the
 * requester's account restricts, embedded versions, media fields, which are read afresh) or
 * the store has no change marks.
 */
export function embeddingMarks(
  rt: Runtime,
  ctx: RequestContext,
  fields: string[],
): string | undefined {
  const store = rt.store;
  if (store.changeMark === undefined) return undefined;
  const plan = embeddingPlan(rt, ctx.resource, fields);
  if (plan === null) return undefined;
  const marks: Array<string | number> = [plan.fields];
  for (const target of plan.targets) {
    if (!ctx.internal && rt.auth?.ownerFilter(target, ctx.account) !== undefined) return undefined;
    marks.push(store.changeMark(target.source));
  }
  return marks.join("\u0000");
}

/**
 * What the embedding of `fields` (an array {@link requestedFields} hands out) in `resource`'s
 * items reads from, worked out once per array: the fields as one text, and the resources the
 * embedded documents come from (as embedDocuments goes: a field it leaves as it is adds
 * none). Null when the embedding reads what is not to be cached: embedded versions, or a
 * target with media fields.
 */
function embeddingPlan(
  rt: Runtime,
  resource: Resource,
  fields: string[],
): { fields: string; targets: Resource[] } | null {
  let plans = PLANS.get(resource);
  if (plans === undefined) PLANS.set(resource, plans = new WeakMap());
  let plan = plans.get(fields);
  if (plan !== undefined) return plan;
  const targets: Resource[] = [];
  plan = { fields: JSON.stringify(fields), targets };
  for (const field of fields) {
    const relation = relationAt(rt, resource, { path: field });
    if (!relation || !relation.embeddable) continue;
    const target = rt.domain.get(relation.resource);
    if (!target || target.internal) continue;
    if ((relation.version && target.versioning) || target.schemaModel.mediaPaths.length > 0) {
      plan = null;
      break;
    }
    targets.push(target);
  }
  plans.set(fields, plan);
  return plan;
}

const PLANS = new WeakMap<
  Resource,
  WeakMap<string[], { fields: string; targets: Resource[] } | null>
>();

/**
 * Embeds versioned references (`{"_id": ..., "_version": n}`) with the version they name,
 * read from the target's stored versions in one query (a document from before versioning
 * is its own version 1).
 */
async function embedVersions(
  rt: Runtime,
  ctx: RequestContext,
  options: { target: Resource; field: string; relField: string; docs: Doc[]; budget: EmbedBudget },
) {
  const { target, field, relField, docs, budget } = options;
  const slots: Array<[Record<string | number, unknown>, string | number, VersionRef]> = [];
  const segments = field.split(".");
  const collect: SlotVisitor = {
    visit(holder, key) {
      const h = holder as Record<string | number, unknown>;
      const ref = versionRef(rt, { field: relField, ref: h[key] });
      if (ref) {
        slots.push([h, key, ref]);
        budget.count(1);
      } else if (h[key] !== null && h[key] !== undefined) h[key] = null;
    },
  };
  ownTopLevelLists(docs, segments);
  for (const doc of docs) eachSlot(doc, segments, collect);
  if (slots.length === 0) return;
  // References through another field than the id name the document by that field's value.
  if (relField !== target.idField) {
    for (const slot of slots) {
      slot[2] = await refById(rt, target, { field: relField, ref: slot[2] }) ??
        { id: undefined, version: -1 };
    }
  }
  // The target's read policy: its filter and default projection; AUTH_FIELD on the
  // target: only versions the requester owned.
  const found = await referencedVersions(rt, target, {
    refs: slots.map(([, , ref]) => ref),
    projection: defaultProjection(rt, target),
    filter: ctx.internal ? undefined : rt.auth?.ownerFilter(target, ctx.account),
  });
  await withCurrent(rt, ctx, { target, versions: [...found.values()] });
  const versions = showable(rt, target, [...found.values()]);
  await expandMedia(rt, target, { docs: versions });
  // As in Eve, an embedded version of a soft-deletable document says whether it was deleted.
  const softDelete = softDeleteOf(rt, target);
  for (const version of found.values()) softDelete.setFlag(version);
  for (const [holder, key, ref] of slots) holder[key] = found.get(versionKey(ref)) ?? null;
}

/**
 * As a version read shows it (and Eve embeds it), an embedded version holds the current
 * values of the fields that are not versioned and the creation date, read (in one query,
 * under the target's read policy) from the current documents, soft-deleted ones included.
 */
async function withCurrent(
  rt: Runtime,
  ctx: RequestContext,
  options: { target: Resource; versions: Doc[] },
): Promise<void> {
  const { target, versions } = options;
  if (versions.length === 0) return;
  const ids = versions.map((version) => version[target.idField]);
  const owner = ctx.internal ? undefined : rt.auth?.ownerFilter(target, ctx.account);
  const primaries = await rt.store.collection(target.source).find(
    andFilters(target.filter, owner, { [target.idField]: { $in: ids } }),
    { projection: defaultProjection(rt, target) },
  );
  const byId = new Map(primaries.map((doc) => [keyOf(doc[target.idField]), doc]));
  for (const version of versions) {
    const primary = byId.get(keyOf(version[target.idField]));
    if (primary) withCurrentFields(rt, target, version, { primary });
  }
}

/**
 * The filter of the documents `values` (by their {@link keyOf}) name through `field`: one
 * reference of a simple type (a string, number, boolean or ObjectId) is an equality, which
 * the stores answer by a key lookup when `field` is the id (`$in` of one value matches the
 * same documents, through the index candidates and a compiled filter); otherwise `$in`.
 * A reference that is a document stays inside `$in`, where its keys are never operators.
 */
function referenceFilter(field: string, values: Map<string, unknown>): Filter {
  if (values.size === 1) {
    const [value] = values.values();
    if (isSimpleValue(value)) return { [field]: value };
  }
  return { [field]: { $in: [...values.values()] } };
}

/** `projection` widened to keep `field` (the reference being resolved), if it is inclusive. */
function withField(projection: Projection | undefined, field: string): Projection | undefined {
  if (!projection) return undefined;
  // Made once per projection and field (a target's default projection is made once): a new
  // projection per embedding request would also be compiled anew by the store each time.
  let byField = WITH_FIELD.get(projection);
  if (!byField) WITH_FIELD.set(projection, byField = new Map());
  let out = byField.get(field);
  if (!out) {
    if (Object.values(projection).includes(1)) out = { ...projection, [field]: 1 };
    else {
      const { [field]: _dropped, ...rest } = projection;
      out = rest;
    }
    byField.set(field, out = Object.freeze(out));
  }
  return out;
}

const WITH_FIELD = new WeakMap<Projection, Map<string, Projection>>();
