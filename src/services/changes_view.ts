/**
 * What one change feed may see and how it shows it. A feed sees the documents a GET on its
 * resource endpoint would list: the read policy's rows (predefined filter, soft delete),
 * the sub-resource URL variables, hook lookups (`on_pre_GET`), the requester's documents
 * only (AUTH_FIELD) and the feed's own `where`, all evaluated in memory on the changed
 * document. A document that leaves that view (a soft delete, an edit out of the filter) is
 * a `delete` event. A document the filter cannot be evaluated on (a `$divide` by a stored
 * zero in the feed's `where`) cannot be shown to be in the view: it is not sent, and logged. Documents in events get the read projection, hidden fields removed,
 * media expanded and links, as a GET shows them.
 */
import type { Doc, Filter, Projection } from "../store/store.ts";
import { documentTest, projected } from "../query/memory.ts";
import { idToString } from "../doc/bson.ts";
import type { ChangeOp, FeedEvent, Selector } from "./changes.ts";
import { andFilters, endpointFilter } from "./filters.ts";
import { expandMedia } from "./media.ts";
import { decorateItems } from "./read.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { versionStamp } from "./versions.ts";
import { showable } from "./visible.ts";

/** A feed's selector and event renderer. */
export interface FeedView {
  select: Selector;
  /** The data of an event, as a document (rendered to JSON by the route). */
  render(event: FeedEvent): Promise<Doc>;
}

/** Options of {@link feedView}. */
export interface FeedViewOptions {
  /** The client's `where`, already checked like a GET's. */
  where?: Filter;
  /** The read projection (the client's combined with the resource's); undefined: all fields. */
  projection?: Projection;
  /** Whether events carry the document. */
  documents: boolean;
}

/** Builds the view of the feed `ctx` asks for. */
export function feedView(rt: Runtime, ctx: RequestContext, options: FeedViewOptions): FeedView {
  const filter = andFilters(endpointFilter(rt, ctx), options.where);
  // With no row condition at all, a removal known only by its id concerns every client.
  const unrestricted = Object.keys(filter).length === 0;
  const test = documentTest(filter, (doc, error) => {
    rt.log.log("warn", "change feed: a changed document could not be evaluated; not sent", {
      resource: ctx.resource.name,
      id: idToString(doc[ctx.resource.idField]),
      error: error instanceof Error ? error.message : String(error),
    });
  });
  const visible = (doc: Doc | null | undefined) => !!doc && test(doc);
  const select: Selector = (change): ChangeOp | null => {
    if (change.op === "insert") return visible(change.doc) ? "insert" : null;
    if (change.op !== "delete" && visible(change.doc)) return change.op;
    if (change.before === undefined) {
      return change.op === "delete" && unrestricted ? "delete" : null;
    }
    return visible(change.before) ? "delete" : null;
  };
  return { select, render: (event) => renderEvent(rt, ctx, { event, ...options }) };
}

async function renderEvent(
  rt: Runtime,
  ctx: RequestContext,
  options: FeedViewOptions & { event: FeedEvent },
): Promise<Doc> {
  const settings = rt.settings;
  const { resource } = ctx;
  const { change, kind } = options.event;
  const latest = change.doc ?? change.before;
  const out: Doc = { op: kind, [resource.idField]: change.id };
  if (resource.ifMatch && typeof latest?.[settings.ETAG] === "string") {
    out[settings.ETAG] = latest[settings.ETAG];
  }
  if (latest?.[settings.DATE_UPDATED] !== undefined) {
    out[settings.DATE_UPDATED] = latest[settings.DATE_UPDATED];
  }
  if (options.documents && kind !== "delete" && change.doc) {
    const [doc] = showable(rt, resource, [projected(change.doc, options.projection)]);
    Object.assign(doc, versionStamp(rt, resource, { doc }));
    const docs = [doc];
    await expandMedia(rt, resource, { docs });
    decorateItems(rt, ctx, { docs });
    out.document = doc;
  }
  return out;
}
