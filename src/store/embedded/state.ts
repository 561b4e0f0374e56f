/**
 * The in-memory image of one collection: documents by `_id` key in natural (insertion)
 * order, unique indexes, and persisted index definitions. Loaded from SQLite on first use.
 */
import type { Doc, IndexSpec } from "../store.ts";
import { decodeJoined, type DecodeOptions, decodeStored, valueKey } from "./codec.ts";
import { DocMap } from "./doc_map.ts";
import { type Built, fieldsRead, IndexBuild } from "./index_build.ts";
import { CountCache } from "./count_cache.ts";
import { Columns, type Timeout } from "./columns.ts";
import { compileFilter, isSimpleValue } from "../../doc/match/engine.ts";
import type { Options } from "mingo/types";
import { type Database, rowsAsArrays } from "./sqlite.ts";
import type { StatementSync } from "node:sqlite";
import { EJSON } from "../../doc/bson.ts";
import { applyToIndex, type Change, indexName, UniqueIndex } from "./indexes.ts";
import { EqIndex, equalityValues, rangeOf, SortedView } from "./secondary.ts";
import type { Filter, Sort } from "../store.ts";

/** Rows whose keys are read per query while loading. */
const LOAD_BATCH = 10_000;

/**
 * The statements that read a collection's rows: the keys and sequence numbers of its rows
 * (loading), a row's text, the rows after one (see `DocMap`) and the rows whose text holds a
 * string (see `candidates`). Arrays of keys come as JSON arrays: a string `_id` may hold
 * any character.
 */
const ROWS_SQL = {
  keys: `SELECT max(seq), json_group_array(id), json_group_array(seq)
    FROM (SELECT seq, id FROM docs WHERE coll = ? AND seq > ? ORDER BY seq LIMIT ?)`,
  text: "SELECT body FROM docs WHERE seq = ? AND coll = ?",
  after: `SELECT json_group_array(id), json_group_array(seq), group_concat(body, char(1))
    FROM (SELECT seq, id, body FROM docs WHERE coll = ? AND seq > ? ORDER BY seq LIMIT ?)`,
  holding: `SELECT json_group_array(id)
    FROM (SELECT id FROM docs WHERE coll = ? AND instr(body, ?) > 0 ORDER BY seq LIMIT ?)`,
};

type RowStatements = { [K in keyof typeof ROWS_SQL]: StatementSync };

/** The row statements of each database, prepared on first use. */
const rowStatements = new WeakMap<Database, RowStatements>();

function rowsOf(db: Database): RowStatements {
  let stmts = rowStatements.get(db);
  if (!stmts) {
    const prepared: Partial<RowStatements> = {};
    for (const [name, sql] of Object.entries(ROWS_SQL)) {
      prepared[name as keyof RowStatements] = rowsAsArrays(db.db.prepare(sql));
    }
    stmts = prepared as RowStatements;
    rowStatements.set(db, stmts);
  }
  return stmts;
}

/**
 * The most documents a read finds by searching the stored texts (see `candidates`); past
 * it, the read builds the collection's indexes instead.
 */
const TEXT_CANDIDATES = 1000;

/**
 * Reads that may search the stored texts while a collection's indexes are being built: each
 * search reads every row (about a fifth of the build's work at 1,000,000 documents), so a
 * later read finishes the build instead, and every read after it is served by the indexes.
 */
const TEXT_SEARCHES = 2;

/**
 * An ordered read takes its candidates from a range only when the range holds at most one
 * document in this many (see `candidates`).
 */
const RANGE_SHARE = 8;

/**
 * A read takes its candidates from an equality index only when they are fewer than one
 * document in this many (see `candidates`).
 */
const EQUALITY_SHARE = 8;

/** Positions of a list to order: below 2^21, so `seq * 2^21 + position` stays exact. */
const POSITIONS = 2 ** 21;

/**
 * `ids` in the order of their sequence numbers (`seqs[i]` is the number of `ids[i]`). The
 * pairs are packed into numbers and sorted natively, without a comparison function: ordering
 * 500 candidates cost a fraction of a sort comparing their numbers looked up in a map.
 */
export function inNaturalOrder(ids: string[], seqs: ArrayLike<number>): string[] {
  const n = ids.length;
  if (n < 2) return ids;
  let top = 0;
  for (let i = 0; i < n; i++) if (seqs[i] > top) top = seqs[i];
  if (n >= POSITIONS || top * POSITIONS + n > Number.MAX_SAFE_INTEGER) {
    const order = Array.from(ids.keys()).sort((a, b) => seqs[a] - seqs[b]);
    return order.map((i) => ids[i]);
  }
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) packed[i] = seqs[i] * POSITIONS + i;
  packed.sort();
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = ids[packed[i] % POSITIONS];
  return out;
}

const RANGE_OPERATORS = new Set(["$gt", "$gte", "$lt", "$lte"]);

const size = (span: [number, number]) => span[1] - span[0];

/** Sorted views kept per collection at most (each holds one entry per document). */
const MAX_VIEWS = 4;

/** The last change mark handed out (see `CollectionState.mark`). */
let lastMark = 0;

function nextMark(): number {
  return ++lastMark;
}

/** The `_id` key of a document (string form used in memory and in SQLite). */
export function idKeyOf(doc: Doc): string {
  return valueKey(doc._id);
}

export class CollectionState {
  /**
   * `_id` key -> document, in natural order. Stored documents are never mutated in place.
   * Loaded documents stay text until first read (see DocMap).
   */
  readonly docs: DocMap;
  #unique: UniqueIndex[] = [];
  /** Every index created (unique or not), by name, as stored. */
  readonly indexSpecs = new Map<string, IndexSpec>();
  /** Whether the collection row exists in SQLite. */
  exists = false;
  #snapshot: Doc[] | null = null;
  /** Columns of the snapshot (see Columns), made on first use, dropped with it. */
  #columns: Columns | null = null;
  readonly #eq = new Map<string, EqIndex>();
  /**
   * Index definitions read with the documents whose in-memory indexes are not built yet:
   * they are built on first use (a write, or a query a filter or sort could narrow), so
   * loading a collection and a first plain read do not wait for them.
   */
  #deferred: IndexSpec[] = [];
  #building = false;
  /**
   * The build of the deferred indexes from the stored rows in progress (see IndexBuild):
   * undefined before it starts, null when it cannot serve (the full build then decodes
   * every document first, as it reports what the documents break).
   */
  #build: IndexBuild | null | undefined = undefined;
  /**
   * `_id` key -> natural-order sequence number, built on first use (index candidates,
   * sorted views): the iteration order of `docs` is the natural order, since a replaced
   * document keeps its place and a new one goes last.
   */
  #seq: Map<string, number> | null = null;
  #nextSeq = 0;
  /** Sorted views by sort specification (JSON), built on first use. */
  readonly #views = new Map<string, SortedView>();
  #mark = nextMark();
  /** Counts of filters over the documents as they are (see count_cache.ts), made on first use. */
  #counts: CountCache | null = null;

  /** The statements reading this collection's rows. */
  readonly #rows: RowStatements;
  readonly #db: Database;
  readonly #decoding: DecodeOptions;

  private constructor(
    readonly name: string,
    readonly options: Partial<Options>,
    db: Database,
  ) {
    const decoding: DecodeOptions = this.#decoding = { exactLongs: db.exactLongs };
    this.#db = db;
    const rows = this.#rows = rowsOf(db);
    this.docs = new DocMap(
      {
        text: (seq) => (rows.text.get(seq, name) as unknown as [string] | undefined)?.[0],
        after: (seq, count) => {
          const [ids, seqs, texts] = rows.after.get(name, seq, count) as unknown as [
            string,
            string,
            string | null,
          ];
          return texts === null ? null : { keys: JSON.parse(ids), seqs: JSON.parse(seqs), texts };
        },
      },
      (text) => decodeStored(text, decoding),
      (texts) => decodeJoined(texts, decoding),
    );
  }

  /**
   * Reads the collection's indexes and the keys of its documents from the database (each
   * document is read and decoded on first read, see DocMap).
   */
  static load(db: Database, name: string, options: Partial<Options>): CollectionState {
    const state = new CollectionState(name, options, db);
    for (let after = -1;;) {
      const [last, ids, seqs] = state.#rows.keys.get(name, after, LOAD_BATCH) as unknown as [
        number | null,
        string,
        string,
      ];
      if (last === null) break;
      state.docs.addStored(JSON.parse(ids), JSON.parse(seqs));
      after = last;
    }
    for (const row of db.stmts.loadIndexes.iterate(name)) {
      const spec = EJSON.parse((row as { spec: string }).spec, { relaxed: true }) as IndexSpec;
      state.indexSpecs.set(indexName(spec), { ...spec, name: indexName(spec) });
      state.#deferred.push(spec);
    }
    state.exists = state.docs.size > 0 || state.indexSpecs.size > 0 ||
      (db.stmts.listCollections.all() as Array<{ name: string }>).some((r) => r.name === name);
    return state;
  }

  /** The timer of the next warming step, if one is due (see `warm`). */
  #warming: ReturnType<typeof setTimeout> | undefined;

  /**
   * Builds the deferred indexes from the stored rows (see IndexBuild) and then decodes the
   * documents not decoded yet, in the background, a batch of rows per turn of the event
   * loop, so the first query or write that needs an index after a restart finds it built,
   * and a scan finds the documents decoded, instead of doing that work itself. Requests
   * keep being served between the steps; `stopWarming` ends it. (Indexes the rows cannot
   * build are built from the decoded documents at the end, as before.)
   */
  warm(): void {
    if (this.#warming !== undefined) return;
    const step = () => {
      this.#warming = undefined;
      try {
        if (this.#deferred.length > 0 && !this.#building) {
          this.#build ??= this.#startBuild();
          if (this.#build !== null) {
            if (this.#build.step()) this.#finishBuild();
            this.#warming = setTimeout(step, 0);
            return;
          }
        }
        if (this.docs.decodeNextBatch()) this.#warming = setTimeout(step, 0);
        else this.#buildDeferred();
      } catch {
        // Damaged stored documents, or an index they break: the request that needs them
        // meets the same error, and answers it, as without warming.
        this.#build = null;
      }
    };
    if (this.docs.undecoded > 0 || this.#deferred.length > 0) this.#warming = setTimeout(step, 0);
  }

  /** Whether every document is decoded and every index built (the warming has ended). */
  get warmed(): boolean {
    return this.docs.undecoded === 0 && this.#deferred.length === 0;
  }

  /** Whether index definitions read with the documents still wait to be built. */
  get indexesPending(): boolean {
    return this.#deferred.length > 0;
  }

  /** Stops the background warming (the store is closing, or the state is dropped). */
  stopWarming(): void {
    clearTimeout(this.#warming);
    this.#warming = undefined;
  }

  /** Unique indexes (built on first use). */
  get unique(): UniqueIndex[] {
    this.#buildDeferred();
    return this.#unique;
  }

  /** Equality indexes by field: the first key of every index created (built on first use). */
  get eq(): Map<string, EqIndex> {
    this.#buildDeferred();
    return this.#eq;
  }

  /**
   * Builds the deferred indexes. One the stored documents break (a damaged file) stays
   * deferred and throws DuplicateKeyError at every use, as loading did when it was built
   * there: its uniqueness is never silently dropped.
   */
  #buildDeferred(): void {
    if (this.#deferred.length === 0 || this.#building) return;
    this.#build ??= this.#startBuild();
    if (this.#build !== null) {
      this.#building = true;
      try {
        while (!this.#build.step());
        this.#finishBuild();
        return;
      } catch {
        // The documents break an index: the full build below meets it and reports it.
        this.#build = null;
      } finally {
        this.#building = false;
      }
    }
    this.docs.decodeAll();
    this.#building = true;
    try {
      while (this.#deferred.length > 0) {
        this.addIndex(this.#deferred[0]);
        this.#deferred.shift();
      }
    } finally {
      this.#building = false;
    }
  }

  /**
   * A build of the deferred indexes from the stored rows, as `addIndex` would register them
   * one after the other; null when their fields cannot be read that way.
   */
  #startBuild(): IndexBuild | null {
    const fields = fieldsRead(this.#deferred);
    if (fields === null) return null;
    const eqFields = new Set(this.#eq.keys());
    const built = this.#deferred.map((spec): Built => {
      const unique = spec.unique
        ? new UniqueIndex(
          indexName(spec),
          spec,
          spec.partialFilterExpression
            ? compileFilter(spec.partialFilterExpression, this.options)
            : undefined,
        )
        : null;
      const field = indexedField(spec);
      let eq: EqIndex | null = null;
      if (field !== null && !eqFields.has(field)) {
        eqFields.add(field);
        const alone = unique && Object.keys(spec.keys).length === 1 &&
          onlyWhereSet(spec.partialFilterExpression, field);
        eq = new EqIndex(field, alone ? unique : undefined);
      }
      return { spec, unique, eq };
    });
    const decoding = this.#decoding;
    return new IndexBuild(
      this.#db,
      this.name,
      fields,
      built,
      (texts) => decodeJoined(texts, decoding),
    );
  }

  /** Registers the indexes a finished build filled. */
  #finishBuild(): void {
    for (const { unique, eq } of this.#build!.built) {
      if (unique) this.#unique.push(unique);
      if (eq) this.#eq.set(eq.field, eq);
    }
    this.#deferred = [];
    this.#build = null;
  }

  /** The sequence numbers, built from the natural order on first use. */
  #sequence(): Map<string, number> {
    if (this.#seq === null) {
      const seq = new Map<string, number>();
      let n = 0;
      for (const id of this.docs.keys()) seq.set(id, n++);
      this.#seq = seq;
      this.#nextSeq = n;
    }
    return this.#seq;
  }

  /** All documents in natural order (shared array, rebuilt after writes). */
  snapshot(): Doc[] {
    if (this.#snapshot === null) this.docs.decodeAll();
    return this.#snapshot ??= Array.from(this.docs.values());
  }

  /** Columns of `fields` over {@link snapshot}, in its order (see Columns.get). */
  columns(fields: readonly string[], timeout: Timeout | null): unknown[][] | null {
    return (this.#columns ??= new Columns(this.snapshot())).get(fields, timeout);
  }

  /**
   * Registers an index and fills it from the current documents. A unique index that the
   * documents already break is not registered; the UniqueIndex is returned for checks.
   */
  buildIndex(spec: IndexSpec): UniqueIndex | null {
    if (!spec.unique) return null;
    const partial = spec.partialFilterExpression
      ? compileFilter(spec.partialFilterExpression, this.options)
      : undefined;
    const index = new UniqueIndex(indexName(spec), spec, partial);
    this.docs.decodeAll();
    for (const [id, doc] of this.docs) {
      for (const key of index.keysOf(doc)) {
        if (index.entries.has(key)) throw index.duplicate(this.name);
        index.entries.set(key, id);
      }
    }
    return index;
  }

  /** Builds and registers `spec` (throws DuplicateKeyError if data breaks it). */
  addIndex(spec: IndexSpec, index = this.buildIndex(spec)): void {
    const name = indexName(spec);
    this.dropIndex(name);
    if (index) this.#unique.push(index);
    this.indexSpecs.set(name, { ...spec, name });
    const field = indexedField(spec);
    if (field !== null && !this.eq.has(field)) {
      const alone = index && Object.keys(spec.keys).length === 1 &&
        onlyWhereSet(spec.partialFilterExpression, field);
      this.eq.set(field, this.#equalityIndex(field, alone ? index : undefined));
    }
  }

  #equalityIndex(field: string, backing?: UniqueIndex): EqIndex {
    const eq = new EqIndex(field, backing);
    this.docs.decodeAll();
    for (const [id, doc] of this.docs) eq.add(doc, id);
    return eq;
  }

  /** Forgets the index called `name`, if any. */
  dropIndex(name: string): void {
    this.#buildDeferred();
    this.indexSpecs.delete(name);
    this.#unique = this.#unique.filter((ix) => ix.name !== name);
    const used = new Set([...this.indexSpecs.values()].map(indexedField));
    for (const [field, eq] of this.eq) {
      if (!used.has(field)) this.eq.delete(field);
      // Another index still wants this field: its map can no longer borrow the dropped one's.
      else if (eq.backing?.name === name) this.eq.set(field, this.#equalityIndex(field));
    }
    for (const [key, view] of this.#views) {
      if (!this.eq.has(Object.keys(view.sort)[0])) this.#views.delete(key);
    }
  }

  /** The last top-level Date a written document brought (see `#shareDates`). */
  #lastDate: Date | null = null;

  /**
   * Makes the top-level Dates of a document written to memory the ones of the document
   * before it when equal (`_created` and `_updated` of documents written in the same
   * second), as loading does: a Date costs about 100 bytes of heap, two per document. The
   * document is the store's own copy (never mutated after this, copied before it is handed
   * out), and an equal Date in its place changes nothing readable.
   */
  #shareDates(doc: Doc): void {
    for (const key in doc) {
      const value = doc[key];
      // (An own `__proto__` member is set only by defining it.)
      if (!(value instanceof Date) || key === "__proto__") continue;
      const last = this.#lastDate;
      if (last !== null && value !== last && last.getTime() === value.getTime()) doc[key] = last;
      else this.#lastDate = value;
    }
  }

  /**
   * A number that changes whenever the collection's documents do (a write applied, a
   * deletion), drawn from one counter of the process: a collection loaded afresh (after a
   * drop, or a failed group commit) never shows a number an earlier image of it showed.
   */
  get mark(): number {
    return this.#mark;
  }

  /** The remembered counts of filters over the documents as they are now. */
  get counts(): CountCache {
    return this.#counts ??= new CountCache();
  }

  /**
   * Reads the documents `changes` replace while their rows still hold them: `apply` takes a
   * replaced document out of the indexes by its old values, and after the write its row
   * holds the new ones. (Every write path reads the document it changes first, so they are
   * usually in memory already; this keeps `apply` right when one does not.)
   */
  holdReplaced(changes: Change[]): void {
    if (this.docs.undecoded === 0) return;
    for (const c of changes) this.docs.get(c.id);
  }

  /** Applies committed changes to memory. */
  apply(changes: Change[]): void {
    for (const c of changes) this.#shareDates(c.after);
    for (const index of this.unique) applyToIndex(index, changes);
    const removed: Array<[string, Doc, number]> = [];
    const added: Array<[string, Doc, number]> = [];
    const seq = this.#seq;
    for (const c of changes) {
      const before = this.docs.get(c.id);
      if (before !== undefined) {
        for (const eq of this.eq.values()) eq.remove(before, c.id);
        if (seq) removed.push([c.id, before, seq.get(c.id)!]);
      } else {
        seq?.set(c.id, this.#nextSeq++);
      }
      for (const eq of this.eq.values()) eq.add(c.after, c.id);
      this.docs.set(c.id, c.after);
      if (seq) added.push([c.id, c.after, seq.get(c.id)!]);
    }
    for (const view of this.#views.values()) view.update(removed, added);
    this.#snapshot = null;
    this.#columns = null;
    this.#mark = nextMark();
    this.#counts = null;
  }

  /** Removes committed deletions from memory. */
  remove(entries: Array<[string, Doc]>): void {
    const removed: Array<[string, Doc, number]> = [];
    for (const [id, doc] of entries) {
      for (const index of this.unique) index.remove(doc, id);
      for (const eq of this.eq.values()) eq.remove(doc, id);
      if (this.docs.delete(id) && this.#seq) removed.push([id, doc, this.#seq.get(id)!]);
      this.#seq?.delete(id);
    }
    for (const view of this.#views.values()) view.update(removed, []);
    this.#snapshot = null;
    this.#columns = null;
    this.#mark = nextMark();
    this.#counts = null;
  }

  /**
   * The `_id` keys of the only documents that can match `filter`, from the most selective
   * equality index a top-level (or `$and`) condition can use, else from a range (`$gt`,
   * `$gte`, `$lt`, `$lte`) on an indexed field; null when no index applies. In natural order
   * unless `natural` is false (counting); a range is used for ordered answers only when it
   * holds few of the documents, since putting its keys back in natural order costs more
   * than a scan that stops at the first page.
   */
  candidates(filter: Filter, options: { natural?: boolean } = {}): string[] | null {
    if (Object.keys(filter).length === 0) return null;
    if (this.#deferred.length > 0 && !this.#building) {
      const early = this.#unbuiltCandidates(filter);
      if (early !== null) return early;
    }
    const natural = options.natural ?? true;
    let best: Set<string> | null = null;
    /** The equality index narrowing most, the values it is asked for and how many it gives. */
    let narrowest: { eq: EqIndex; values: unknown[]; count: number } | null = null;
    let ranged: { view: SortedView; span: [number, number] } | null = null;
    const visit = (f: Filter, depth: number) => {
      for (const key of Object.keys(f)) {
        if (key === "$and" && depth < 4 && Array.isArray(f.$and)) {
          for (const sub of f.$and) {
            if (sub !== null && typeof sub === "object" && !Array.isArray(sub)) {
              visit(sub as Filter, depth + 1);
            }
          }
          continue;
        }
        if (key === "_id") {
          // The primary key: `{_id: x}` or `$in` inside an `$and` (a soft-delete or
          // predefined filter joined to an item's lookup), or an embedding's `$in`.
          const found = this.#byIds(f._id);
          if (found && (best === null || found.size < best.size)) best = found;
          continue;
        }
        const eq = this.eq.get(key);
        if (!eq) continue;
        const values = equalityValues(f[key]);
        const count = values && eq.count(values);
        if (count !== null && (narrowest === null || count < narrowest.count)) {
          narrowest = { eq, values: values!, count };
        }
        if (count !== null || best !== null || narrowest !== null) continue;
        const range = rangeOf(f[key]);
        const view = range && this.#view({ [key]: 1 });
        const span = view && view.span(range);
        if (span && (ranged === null || size(span) < size(ranged.span))) ranged = { view, span };
      }
    };
    visit(filter, 0);
    const eqBest = narrowest as { eq: EqIndex; values: unknown[]; count: number } | null;
    if (eqBest !== null && (best === null || eqBest.count < (best as Set<string>).size)) {
      // A scan walks the documents in the order memory holds them, testing each, and a read
      // in natural order stops at its last match; a candidate is looked up out of that order
      // (and a read's put in natural order first): at 200,000 documents one cost 6-8 times
      // a scanned document. Past a share of the collection, the scan costs less.
      if (eqBest.count > 1 && eqBest.count * EQUALITY_SHARE >= this.docs.size) return null;
      const ids = eqBest.eq.candidates(eqBest.values)!;
      return natural ? this.#inNaturalOrder(ids) : ids;
    }
    if (best !== null) {
      const ids = [...best as Set<string>];
      return natural ? this.#inNaturalOrder(ids) : ids;
    }
    if (ranged === null) return null;
    const { view, span } = ranged as { view: SortedView; span: [number, number] };
    // Sized before anything is built: most ranges asked for a page are too wide to pay off.
    if (natural && size(span) > this.docs.size / RANGE_SHARE) return null;
    const entries = view.entries(span);
    const ids = entries.map((e) => e[1]);
    return natural ? inNaturalOrder(ids, entries.map((e) => e[0])) : ids;
  }

  /** `ids` in natural order (see {@link inNaturalOrder}). */
  #inNaturalOrder(ids: string[]): string[] {
    if (ids.length < 2) return ids;
    const seq = this.#sequence();
    const seqs = new Float64Array(ids.length);
    for (let i = 0; i < ids.length; i++) seqs[i] = seq.get(ids[i])!;
    return inNaturalOrder(ids, seqs);
  }

  /** How many reads have searched the stored texts (see TEXT_SEARCHES). */
  #textSearches = 0;

  /**
   * Candidates found without the indexes, while they are not built yet (a restart's first
   * reads, before the warming has built them): the document of an `_id` equal to one value,
   * else the documents whose stored text holds the text of a string a field must equal
   * (`{"email": "a@b.org"}`, also inside `$and`), found by SQLite in the rows, when there are
   * at most {@link TEXT_CANDIDATES}, for the first {@link TEXT_SEARCHES} such reads. Null when
   * neither applies: the indexes are built then.
   *
   * The text search finds every document that can match: a document whose field (at any
   * depth, or an element of an array there) equals a string holds that string's JSON text,
   * which is how the store writes every string (`compactEjson`), and every document in
   * memory is in its row (a write changes both in one turn). It finds them in natural order,
   * the order of their rows. The full filter then decides.
   */
  #unbuiltCandidates(filter: Filter): string[] | null {
    let text: string | null = null;
    const visit = (f: Filter, depth: number): string[] | null => {
      for (const key of Object.keys(f)) {
        if (key === "$and" && depth < 4 && Array.isArray(f.$and)) {
          for (const sub of f.$and) {
            if (sub === null || typeof sub !== "object" || Array.isArray(sub)) continue;
            const found = visit(sub as Filter, depth + 1);
            if (found !== null) return found;
          }
          continue;
        }
        if (key[0] === "$") continue;
        const values = equalityValues(f[key]);
        if (values === null || values.length !== 1) continue;
        if (key === "_id") {
          const found = this.#byIds(f._id);
          if (found !== null) return [...found];
        } else if (text === null && typeof values[0] === "string") {
          text = JSON.stringify(values[0]);
        }
      }
      return null;
    };
    const byId = visit(filter, 0);
    if (byId !== null || text === null || this.#textSearches >= TEXT_SEARCHES) return byId;
    this.#textSearches++;
    const [found] = this.#rows.holding.get(this.name, text, TEXT_CANDIDATES + 1) as unknown as [
      string,
    ];
    const keys = JSON.parse(found) as string[];
    return keys.length > TEXT_CANDIDATES ? null : keys.filter((key) => this.docs.has(key));
  }

  /**
   * The keys of the stored documents whose `_id` can equal `cond` when it is a simple value,
   * `{$eq: v}` or `{$in: [...]}` of simple values (the full filter checks the rest); else null.
   */
  #byIds(cond: unknown): Set<string> | null {
    const values = equalityValues(cond);
    if (!values || !values.every((v) => isSimpleValue(v) || v instanceof Date)) return null;
    const out = new Set<string>();
    for (const v of values) {
      const key = valueKey(v);
      if (this.docs.has(key)) out.add(key);
    }
    return out;
  }

  /**
   * The number of documents matching `filter` when it is one range condition on an indexed
   * field (`{"age": {"$gt": 50}}`), read from the field's sorted view; else null.
   */
  rangeCount(filter: Filter): number | null {
    const keys = Object.keys(filter);
    if (keys.length !== 1) return null;
    const cond = filter[keys[0]] as Doc;
    const range = rangeOf(cond);
    if (!range || Object.keys(cond).some((op) => !RANGE_OPERATORS.has(op))) return null;
    // Asked last: other counts need not build the indexes here.
    if (!this.eq.has(keys[0])) return null;
    const span = this.#view({ [keys[0]]: 1 })?.span(range);
    return span ? span[1] - span[0] : null;
  }

  /**
   * The documents in the order of `sort` (ties in natural order) when the first sort field
   * is indexed; null otherwise. Views are kept up to date through writes.
   */
  sorted(sort: Sort): Iterable<[string, Doc]> | null {
    return this.#view(sort)?.docs() ?? null;
  }

  #view(sort: Sort): SortedView | null {
    const first = Object.keys(sort)[0];
    if (first === undefined || !this.eq.has(first)) return null;
    const key = JSON.stringify(sort);
    let view = this.#views.get(key);
    if (!view) {
      if (this.#views.size >= MAX_VIEWS) this.#views.delete(this.#views.keys().next().value!);
      const seq = this.#sequence();
      const entries: Array<[string, Doc, number]> = [];
      this.docs.decodeAll();
      for (const [id, doc] of this.docs) entries.push([id, doc, seq.get(id)!]);
      view = new SortedView(sort, entries);
      this.#views.set(key, view);
    }
    return view;
  }
}

/**
 * Whether a partial filter leaves out only documents without `field` (no filter, or the
 * `{field: {$exists: true}}` that `unique` fields get): an equality index files none of
 * those either (nor does a sparse index).
 */
function onlyWhereSet(partial: Filter | undefined, field: string): boolean {
  if (!partial) return true;
  const keys = Object.keys(partial);
  if (keys.length !== 1 || keys[0] !== field) return false;
  const cond = partial[field] as Doc | null;
  return cond !== null && typeof cond === "object" && Object.keys(cond).length === 1 &&
    cond.$exists === true;
}

/** The field an index gives an equality index and sorted views: its first key, when top-level. */
function indexedField(spec: IndexSpec): string | null {
  const [field, dir] = Object.entries(spec.keys)[0] ?? [];
  if (field === undefined || field.includes(".") || field[0] === "$") return null;
  return dir === 1 || dir === -1 ? field : null;
}
