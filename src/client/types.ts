/**
 * The type vocabulary of the client: what a resource looks like to it (`ResourceShape`,
 * which generated types fill in per resource) and the typed query pieces built from that
 * shape (`Where`, `Sort`, `Projection`, `Embedded`).
 */

/** Everything the client knows about one resource's types. */
export interface ResourceShape {
  /** A stored document as the service answers it (meta fields included). */
  document: object;
  /** A create or replace body (POST, PUT). */
  input: object;
  /** A PATCH body: any subset of the writable fields. */
  patch: object;
  /** The fields a query may name (dotted paths for nested fields) and their value types. */
  fields: object;
  /** The item lookups: the id field and the additional lookup field, with their value types. */
  lookups: object;
  /** The fields `embedded` may name (`never` when none is embeddable). */
  embeddable: string;
  /** The URL variables of a sub-resource path (`{}` for a plain resource). */
  params: object;
}

/** A whole API: resource name -> shape. */
export type ApiShape = { [resource: string]: ResourceShape };

/** The shape of a resource nothing is known about (untyped use). */
export interface AnyResource extends ResourceShape {
  document: Record<string, unknown> & { _id: string; _etag?: string };
  input: Record<string, unknown>;
  patch: Record<string, unknown>;
  fields: Record<string, unknown>;
  lookups: Record<string, string>;
  embeddable: string;
  params: Record<string, string>;
}

/** Any API (untyped use). */
export type AnyApi = { [resource: string]: AnyResource };

/** Comparison and membership operators on a value of type `V`. */
export interface Operators<V> {
  $eq?: V | null;
  $ne?: V | null;
  $gt?: V;
  $gte?: V;
  $lt?: V;
  $lte?: V;
  $in?: V[];
  $nin?: V[];
  $all?: V[];
  $exists?: boolean;
  $size?: number;
  $regex?: V extends string ? string : never;
  $options?: V extends string ? string : never;
  $not?: Operators<V>;
}

/** A `where` filter in MongoDB's dialect over the fields `F` (field -> value type). */
export type Where<F> =
  & { [K in keyof F]?: F[K] | null | Operators<F[K]> }
  & { $and?: Where<F>[]; $or?: Where<F>[]; $nor?: Where<F>[] };

/** Sort keys: a field name, `-` in front for descending. */
export type SortKey<F> = (keyof F & string) | `-${keyof F & string}`;

/** A sort: keys in order of precedence. */
export type Sort<F> = readonly SortKey<F>[];

/** A projection: field -> 1 (include) or 0 (exclude); inclusive and exclusive can't mix. */
export type Projection<F> = { [K in keyof F]?: 0 | 1 };

/** Embedding: embeddable field -> 1 (embed) or 0 (don't embed a default one). */
export type Embedded<E extends string> = { [K in E]?: 0 | 1 };

/** What the service answers for a write of one document. */
export interface Written {
  _id: string;
  _etag?: string;
  _created?: string;
  _updated?: string;
  _status: "OK";
  _links?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One page of a listing. */
export interface Page<D> {
  items: D[];
  /** `_meta`: page number, page size and (unless counts are skipped) the total. */
  meta: { page?: number; max_results?: number; total?: number };
  /** `_links` of the page (`next`, `prev`, `last` ... when applicable). */
  links: Record<string, { href: string; title?: string }>;
}

/** An event of a change feed. */
export interface ChangeEvent<D> {
  /** The event id, to resume after (null for an opening `ready` event of a resumed feed). */
  id: string | null;
  /** `insert`, `update`, `replace`, `delete`, or the feed's own `ready` and `reset`. */
  type: "insert" | "update" | "replace" | "delete" | "ready" | "reset";
  /** The changed document's id (document events). */
  documentId?: string;
  /** The document's new ETag (document events). */
  etag?: string;
  /** The document, on a feed opened with `documents: true` (not on deletes). */
  document?: D;
  /** The event's data as the service sent it. */
  data: Record<string, unknown>;
}
