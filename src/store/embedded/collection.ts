/**
 * A collection of the embedded store. Every call runs synchronously to completion, so
 * calls never interleave; writes go to SQLite in one transaction first and reach memory
 * only once committed.
 */
import { Query } from "mingo/query";
import { updateOne as mingoUpdateOne } from "mingo/updater";
import type { Options } from "mingo/types";
import type {
  AggregateOptions,
  Alongside,
  Collection,
  Doc,
  Filter,
  FindOptions,
  IndexSpec,
  Sort,
  WriteOptions,
} from "../store.ts";
import { DuplicateKeyError, InvalidQueryError, QueryTimeoutError, StoreError } from "../store.ts";
import { ObjectId } from "../../doc/bson.ts";
import { isPlainObject } from "../../util/plain.ts";
import { cloneValue, copyTopLevel } from "../../doc/clone.ts";
import { encodeDoc, valueKey } from "./codec.ts";
import { compareValues, EMPTY, pathValues, sortDocs } from "../../doc/match/compare.ts";
import {
  compileFilter,
  engineReason,
  equalityFields,
  idEqualityWithin,
  MATCH_ALL,
  onlyIdEquality,
  plainOptions,
} from "../../doc/match/engine.ts";
import { type Change, checkUnique, indexName } from "./indexes.ts";
import type { Database } from "./sqlite.ts";
import { type CollectionState, idKeyOf } from "./state.ts";
import { runAggregate } from "./aggregate.ts";
import { countKey, pipelineKey, smallResult } from "./count_cache.ts";
import type { Timeout } from "./columns.ts";
import { distanceOf, getPath, sortByDistance } from "../../doc/match/geo.ts";
import {
  holdsText,
  loadStemmers,
  readTextSearch,
  textMatcher,
  textScorer,
  withTextMatcher,
} from "../../doc/match/text.ts";
import { withField } from "../../doc/match/stages.ts";
import { type Near, readGeoNear, readNear, requireNearIndex } from "../../doc/near.ts";
import { compileTopLevel } from "./project.ts";
import { firstSorted, MAX_FIRST_SORTED } from "./first_sorted.ts";
import { EJSON } from "../../doc/bson.ts";

/** What a collection needs from its store. */
export interface StoreContext {
  readonly db: Database;
  readonly options: Partial<Options>;
  /** The loaded state of a collection (loads it on first use). */
  state(name: string): CollectionState;
  /** Deadline of one query scan in ms (QUERY_TIMEOUT_MS); 0 or absent: none. */
  readonly queryTimeoutMs?: number;
  /** Forgets the loaded state of a collection (after drop). */
  reset(name: string): void;
}

/** The embedded implementation of {@link Collection}. */
export class EmbeddedCollection implements Collection {
  constructor(readonly name: string, readonly ctx: StoreContext) {}

  #state(): CollectionState {
    this.ctx.db.assertOpen();
    return this.ctx.state(this.name);
  }

  /**
   * Matching `[idKey, doc]` pairs, at most `max` of them, in natural order unless
   * `natural` is false (when only their number matters). `candidates`: the index
   * candidates when the caller has worked them out already. `skip`: matches passed over
   * first (counted, not collected; they do not count against `max`).
   */
  #match(
    filter: Filter,
    max = Infinity,
    options: { natural?: boolean; candidates?: string[] | null; skip?: number } = {},
  ): Array<[string, Doc]> {
    const state = this.#state();
    const out: Array<[string, Doc]> = [];
    if (max <= 0) return out;
    let skip = options.skip ?? 0;
    const id = idEqualityWithin(filter);
    if (id !== undefined) {
      const key = valueKey(id);
      const doc = state.docs.get(key);
      if (!doc) return out;
      const rest = onlyIdEquality(filter);
      if ((rest || compileFilter(filter, this.ctx.options)(doc)) && skip === 0) {
        out.push([key, doc]);
      }
      return out;
    }
    const test = compileFilter(filter, this.ctx.options);
    const clock = new ScanClock(this.ctx.queryTimeoutMs ?? 0);
    const candidates = options.candidates !== undefined
      ? options.candidates
      : state.candidates(filter, { natural: options.natural ?? true });
    if (candidates) {
      for (const key of candidates) {
        if (clock.on && --clock.left === 0) clock.check();
        const doc = state.docs.get(key)!;
        if (test(doc)) {
          if (skip > 0) skip--;
          else if (out.push([key, doc]) >= max) break;
        }
      }
      return out;
    }
    // Without a filter, the documents a page skips are passed over without a test.
    const all = test === MATCH_ALL;
    for (const entry of state.docs) {
      if (clock.on && --clock.left === 0) clock.check();
      if (all || test(entry[1])) {
        if (skip > 0) skip--;
        else if (out.push(entry) >= max) break;
      }
    }
    return out;
  }

  /**
   * What {@link #match} finds, for reads: the matching documents themselves pushed onto
   * `into` (none when it is null: only their number matters), at most `max` of them after
   * `skip` matches passed over, in natural order unless `natural` is false; returns how many
   * were found (or pushed). A scan without index candidates walks the documents alone, not
   * their `[key, document]` entries: an entry is an array made per document reached, and a
   * page deep in a collection, or a count, reaches most of them (a page of 25 at page 20 of
   * 40 made 500 of them).
   */
  #scan(
    filter: Filter,
    max: number,
    options: { natural?: boolean; candidates?: string[] | null; skip?: number },
    into: Doc[] | null,
  ): number {
    const state = this.#state();
    if (max <= 0) return 0;
    let skip = options.skip ?? 0;
    const id = idEqualityWithin(filter);
    if (id !== undefined) {
      const doc = state.docs.get(valueKey(id));
      if (!doc || skip > 0) return 0;
      if (!onlyIdEquality(filter) && !compileFilter(filter, this.ctx.options)(doc)) return 0;
      into?.push(doc);
      return 1;
    }
    const test = compileFilter(filter, this.ctx.options);
    const clock = new ScanClock(this.ctx.queryTimeoutMs ?? 0);
    let found = 0;
    const candidates = options.candidates !== undefined
      ? options.candidates
      : state.candidates(filter, { natural: options.natural ?? true });
    if (candidates) {
      for (const key of candidates) {
        if (clock.on && --clock.left === 0) clock.check();
        const doc = state.docs.get(key)!;
        if (test(doc)) {
          if (skip > 0) skip--;
          else {
            into?.push(doc);
            if (++found >= max) break;
          }
        }
      }
      return found;
    }
    // Without a filter, the documents a page skips are passed over without a test, and the
    // clock read every 4096 of them (as #match).
    const all = test === MATCH_ALL;
    if (all) clock.stride = clock.left = 4096;
    for (const doc of state.docs.values()) {
      if (clock.on && --clock.left === 0) clock.check();
      if (all || test(doc)) {
        if (skip > 0) skip--;
        else {
          into?.push(doc);
          if (++found >= max) break;
        }
      }
    }
    return found;
  }

  /**
   * The first `max` matches in `sort` order from a sorted view, when the sort's first
   * field is indexed; else null. For filters no index narrows (the caller checks).
   */
  #matchSorted(filter: Filter, sort: Sort, max: number): Doc[] | null {
    const view = this.#state().sorted(sort);
    if (!view) return null;
    const test = compileFilter(filter, this.ctx.options);
    const out: Doc[] = [];
    if (max <= 0) return out;
    const timeout = this.ctx.queryTimeoutMs ?? 0;
    const deadline = timeout > 0 ? performance.now() + timeout : Infinity;
    let seen = 0;
    for (const [, doc] of view) {
      if ((++seen & 63) === 0 && performance.now() > deadline) {
        throw new QueryTimeoutError(`query exceeded ${timeout} ms`);
      }
      if (test(doc)) {
        out.push(doc);
        if (out.length >= max) break;
      }
    }
    return out;
  }

  find(filter: Filter, options: FindOptions = {}): Promise<Doc[]> {
    if (holdsText(filter)) {
      return loadStemmers().then(() => run(() => this.#find(this.#withText(filter), options)));
    }
    return run(() => this.#find(filter, options));
  }

  /**
   * `filter` with its `$text` as the test the collection's text index makes of it
   * (../../doc/match/text.ts): refused without a text index, as MongoDB refuses it.
   */
  #withText(filter: Filter): Filter {
    return this.#textSearch(filter).filter;
  }

  /**
   * {@link #withText}, and with `scored` the text score of the documents it finds (an
   * aggregation's `{"$meta": "textScore"}`).
   */
  #textSearch(
    filter: Filter,
    scored = false,
  ): { filter: Filter; score?: (doc: Doc) => number } {
    const spec = [...this.#state().indexSpecs.values()].find((s) =>
      Object.values(s.keys).includes("text")
    );
    let score: ((doc: Doc) => number) | undefined;
    const rewritten = withTextMatcher(filter, (condition) => {
      if (!spec) {
        const reason = "text index required for $text query";
        throw new InvalidQueryError(reason, { reason });
      }
      const options = spec.options ?? {};
      const search = readTextSearch(condition, {
        fields: Object.keys(spec.keys).filter((key) => spec.keys[key] === "text"),
        defaultLanguage: typeof options.default_language === "string"
          ? options.default_language
          : undefined,
        languageOverride: typeof options.language_override === "string"
          ? options.language_override
          : undefined,
        weights: isPlainObject(options.weights) ? options.weights : undefined,
      });
      if (scored) score = textScorer(search);
      return textMatcher(search);
    });
    return { filter: rewritten, score };
  }

  /**
   * The `$near`/`$nearSphere` of `filter` (null when it has none), refused as MongoDB refuses
   * it: misplaced, malformed, or without a geo index of the kind it needs on its field
   * (../../doc/near.ts). A read of one `_id` is not looked into.
   */
  #near(filter: Filter): Near | null {
    if (idEqualityWithin(filter) !== undefined) return null;
    const near = readNear(filter);
    if (near) {
      requireNearIndex(near, [...this.#state().indexSpecs.values()].map((spec) => spec.keys));
    }
    return near;
  }

  #find(filter: Filter, options: FindOptions): Doc[] {
    const skip = Math.max(0, options.skip ?? 0);
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const sorted = options.sort && Object.keys(options.sort).length > 0;
    const near = this.#near(filter);
    const ordered = sorted || near !== null;
    // A sorted read works out the index candidates once: with none, it walks a sorted view.
    const narrowed = sorted && idEqualityWithin(filter) === undefined;
    const candidates = narrowed ? this.#state().candidates(filter) : undefined;
    const fromView = narrowed && !candidates
      ? this.#matchSorted(filter, options.sort!, skip + limit)
      : null;
    let docs: Doc[];
    if (fromView) docs = fromView.slice(skip, skip + limit);
    else if (ordered) {
      docs = [];
      this.#scan(filter, Infinity, { candidates }, docs);
      docs = !sorted
        ? sortByDistance(docs, near!)
        : skip + limit <= MAX_FIRST_SORTED
        ? firstSorted(docs, options.sort!, skip + limit)
        : sortDocs(docs, options.sort!);
      docs = docs.slice(skip, skip + limit);
    } else {
      // A page of a filter whose whole count was just taken: a slice of the matches it found
      // (not asked for single documents: an item's lookup is by key or index anyway).
      const matches = skip > 0 || limit > 1 ? this.#remembered(this.#state(), filter) : undefined;
      if (matches) docs = matches.slice(skip, skip + limit);
      else {
        docs = [];
        this.#scan(filter, limit, { candidates, skip }, docs);
      }
    }
    // Stored documents are replaced on write, never changed (state.ts `apply`).
    const { stored, known } = options;
    if (stored) { for (let i = 0; i < docs.length; i++) stored.push(docs[i]); }
    const { projection } = options;
    const projected = projection !== undefined && Object.keys(projection).length > 0;
    const shared = options.shared === true;
    const topLevel = projected ? compileTopLevel(projection) : null;
    if (topLevel) {
      const opts = { shared };
      return known
        ? docs.map((doc) => known(doc) ?? topLevel(doc, opts))
        : docs.map((doc) => topLevel(doc, opts));
    }
    // Copy before projecting: mingo's projection may edit nested values in place.
    const copy = shared && !projected ? copyTopLevel : cloneValue;
    if (known && !projected) return docs.map((doc) => known(doc) ?? copy(doc));
    docs = docs.map(copy);
    if (projected) {
      const positional = Object.keys(projection).some((k) => k.endsWith(".$"));
      const query = new Query(positional ? filter : {}, this.ctx.options);
      docs = query.find<Doc>(docs, projection).all();
    }
    return docs;
  }

  findOne(filter: Filter, options: FindOptions = {}): Promise<Doc | null> {
    if (holdsText(filter)) {
      return this.find(filter, { ...options, limit: 1 }).then((docs) => docs[0] ?? null);
    }
    return run(() => this.#find(filter, { ...options, limit: 1 })[0] ?? null);
  }

  count(filter: Filter, options: { limit?: number; skip?: number } = {}): Promise<number> {
    if (holdsText(filter)) {
      return loadStemmers().then(() => this.count(this.#withText(filter), options));
    }
    return run(() => {
      const skip = Math.max(0, options.skip ?? 0);
      const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
      const all = Object.keys(filter).length === 0;
      if (!all) this.#near(filter);
      const state = this.#state();
      const n = all
        ? state.docs.size
        : state.rangeCount(filter) ?? this.#countByScan(state, filter, skip + limit);
      return Math.max(0, Math.min(n - skip, limit));
    });
  }

  /**
   * The documents matching `filter`, counted up to `upTo`; a whole count of a filter of plain
   * data is remembered until the collection's documents change (count_cache.ts).
   */
  #countByScan(state: CollectionState, filter: Filter, upTo: number): number {
    const key = upTo === Infinity ? countKey(filter) : undefined;
    if (key === undefined) return this.#scan(filter, upTo, { natural: false }, null);
    const counts = state.counts;
    const known = counts.get(key);
    if (known !== undefined) return known;
    const candidates = state.candidates(filter, { natural: false });
    if (candidates !== null) {
      const n = this.#scan(filter, upTo, { candidates }, null);
      counts.set(key, n);
      return n;
    }
    // Every document tested, in natural order: the matches are kept for pages of the filter.
    const found: Doc[] = [];
    const n = this.#scan(filter, upTo, { candidates }, found);
    counts.set(key, n);
    counts.setMatches(key, found);
    return n;
  }

  /**
   * The documents `filter` matches in natural order, when a whole count of it found them on
   * the collection as it is now (see {@link #countByScan}); else undefined.
   */
  #remembered(state: CollectionState, filter: Filter): Doc[] | undefined {
    const counts = state.counts;
    if (!counts.listsMatches) return undefined;
    const key = countKey(filter);
    return key === undefined ? undefined : counts.matches(key);
  }

  insertMany(docs: Doc[], options: WriteOptions = {}): Promise<void> {
    return run(() => {
      const state = this.#state();
      const changes: Change[] = [];
      const ids = new Set<string>();
      for (const input of docs) {
        if (input._id === undefined) input._id = new ObjectId();
        const doc = cloneValue(input);
        const id = idKeyOf(doc);
        if (state.docs.has(id) || ids.has(id)) throw idDuplicate(this.name);
        ids.add(id);
        changes.push({ id, after: doc });
      }
      return this.#commit(state, changes, { insert: true, alongside: options.alongside });
    });
  }

  /**
   * Checks unique indexes, writes `changes` (and the `alongside` inserts into another
   * collection) atomically in the open group commit, then updates memory. The promise
   * settles when the write is durable.
   */
  #commit(
    state: CollectionState,
    changes: Change[],
    { insert, alongside }: { insert: boolean; alongside?: WriteOptions["alongside"] },
  ): Promise<void> {
    if (changes.length === 0) return DONE;
    for (const index of state.unique) checkUnique(index, changes, this.name);
    const side = alongside && this.#prepareAlongside(alongside);
    if (!insert) state.holdReplaced(changes);
    const encoded = changes.map((c) => encodeDoc(c.after));
    const { db } = this.ctx;
    // One written document and one or two alongside (a POST, PATCH, PUT or soft delete, its
    // oplog entry and its version copy) in one statement of two or three rows: all or
    // nothing by itself, so without a savepoint around it (three statements fewer for an
    // edit).
    const rows = changes.length === 1 && state.exists ? side?.single : undefined;
    const replaced = rows && !insert && changes[0].before !== undefined;
    const durable = rows && (insert || replaced)
      ? db.grouped(
        () =>
          (rows.length === 3
            ? (insert ? db.stmts.insertTwoDocs : db.stmts.replaceAndInsert)
            : (insert ? db.stmts.insertThreeDocs : db.stmts.replaceAndInsertTwo)).run(
              this.name,
              changes[0].id,
              encoded[0],
              ...rows,
            ),
        { oneStatement: true },
      )
      : db.grouped(() => {
        this.#ensureExists(state);
        for (let i = 0; i < changes.length; i++) {
          if (insert || !changes[i].before) {
            db.stmts.insertDoc.run(this.name, changes[i].id, encoded[i]);
          } else {
            db.stmts.updateDoc.run(encoded[i], this.name, changes[i].id);
          }
        }
        side?.write();
      }, { oneStatement: changes.length === 1 && !side && state.exists });
    state.exists = true;
    state.apply(changes);
    side?.apply();
    return durable;
  }

  #ensureExists(state: CollectionState, name = this.name): void {
    if (!state.exists) this.ctx.db.stmts.insertCollection.run(name);
  }

  /**
   * Checks inserts into other collections and returns how to write them inside the caller's
   * transaction and then apply them to memory. Undefined when there is nothing to insert.
   */
  #prepareAlongside(alongside: Alongside | readonly Alongside[]) {
    if (!Array.isArray(alongside)) return this.#prepareOneAlongside(alongside as Alongside);
    const sides = alongside.map((a) => this.#prepareOneAlongside(a)).filter((s) => s !== undefined);
    if (sides.length <= 1) return sides[0];
    // One row each (an oplog entry and a version copy): their rows side by side.
    const single = sides.length === 2 && sides[0].single && sides[1].single
      ? [...sides[0].single, ...sides[1].single]
      : undefined;
    return {
      single,
      write: () => sides.forEach((side) => side.write()),
      apply: () => sides.forEach((side) => side.apply()),
    };
  }

  /** {@link #prepareAlongside} of the inserts into one collection. */
  #prepareOneAlongside(alongside: Alongside) {
    if (alongside.docs.length === 0) return undefined;
    const name = alongside.collection;
    const state = this.ctx.state(name);
    const changes: Change[] = [];
    for (const input of alongside.docs) {
      if (input._id === undefined) input._id = new ObjectId();
      const doc = cloneValue(input);
      const id = idKeyOf(doc);
      if (state.docs.has(id) || changes.some((c) => c.id === id)) throw idDuplicate(name);
      changes.push({ id, after: doc });
    }
    for (const index of state.unique) checkUnique(index, changes, name);
    const encoded = changes.map((c) => encodeDoc(c.after));
    const { db } = this.ctx;
    return {
      /** The one document's row (collection, key, text), when there is one and its collection exists. */
      single: changes.length === 1 && state.exists
        ? [name, changes[0].id, encoded[0]] as string[]
        : undefined,
      write: () => {
        this.#ensureExists(state, name);
        changes.forEach((c, i) => db.stmts.insertDoc.run(name, c.id, encoded[i]));
      },
      apply: () => {
        state.exists = true;
        state.apply(changes);
      },
    };
  }

  replaceOne(
    filter: Filter,
    doc: Doc,
    options: { upsert?: boolean } & WriteOptions = {},
  ): Promise<{ matched: number }> {
    return run(() => {
      const state = this.#state();
      const [hit] = this.#match(filter, 1);
      const replacement = cloneValue(doc);
      if (!hit) {
        if (!options.upsert) return { matched: 0 };
        const _id = replacement._id ?? equalityFields(filter)._id ?? new ObjectId();
        const created = { _id, ...replacement };
        return this.#insertOne(state, created, options.alongside).then(() => ({ matched: 0 }));
      }
      const [id, before] = hit;
      if (replacement._id !== undefined && valueKey(replacement._id) !== id) {
        throw immutableId();
      }
      // The stored id, first: the copy's own top level is set in place when its first
      // member is the id already (an edit of a stored document), not copied again.
      const after = replacement._id !== undefined && firstKeyIsId(replacement)
        ? (replacement._id = before._id, replacement)
        : { _id: before._id, ...replacement };
      return this.#commit(state, [{ id, before, after }], {
        insert: false,
        alongside: options.alongside,
      })
        .then(() => ({ matched: 1 }));
    });
  }

  #insertOne(
    state: CollectionState,
    doc: Doc,
    alongside?: WriteOptions["alongside"],
  ): Promise<void> {
    const id = idKeyOf(doc);
    if (state.docs.has(id)) throw idDuplicate(this.name);
    return this.#commit(state, [{ id, after: doc }], { insert: true, alongside });
  }

  updateOne(
    filter: Filter,
    update: Doc,
    options: { upsert?: boolean } = {},
  ): Promise<{ matched: number }> {
    return run(() => {
      const state = this.#state();
      const hits = this.#match(filter, 1);
      if (hits.length === 0) {
        const done = options.upsert ? this.#upsert(state, filter, update) : DONE;
        return done.then(() => ({ matched: 0 }));
      }
      return this.#update(state, hits, { filter, update }).then(() => ({ matched: 1 }));
    });
  }

  updateMany(filter: Filter, update: Doc): Promise<number> {
    return run(() => {
      const state = this.#state();
      const hits = this.#match(filter);
      return this.#update(state, hits, { filter, update }).then(() => hits.length);
    });
  }

  #update(
    state: CollectionState,
    hits: Array<[string, Doc]>,
    { filter, update }: { filter: Filter; update: Doc },
  ): Promise<void> {
    const modifier = prepareModifier(update, false);
    const prepared = { modifier, condition: usesPositional(modifier) ? filter : undefined };
    const changes: Change[] = [];
    for (const [id, before] of hits) {
      const after = this.#applyUpdate(cloneValue(before), prepared);
      if (!after) continue;
      if (valueKey(after._id) !== id) throw immutableId();
      changes.push({ id, before, after });
    }
    return this.#commit(state, changes, { insert: false });
  }

  /**
   * Applies a prepared update (`condition`: the filter, for positional operators) to a
   * private copy; returns the new document, or null if unchanged.
   */
  #applyUpdate(
    doc: Doc,
    { modifier, condition }: { modifier: Doc | Doc[]; condition: Filter | undefined },
  ): Doc | null {
    const docs = [doc];
    const result = mingoUpdateOne(
      docs,
      condition ?? {},
      modifier as Parameters<typeof mingoUpdateOne>[2],
      { cloneMode: "none" },
      plainOptions(this.ctx.options),
    );
    return result.modifiedCount > 0 ? docs[0] : null;
  }

  #upsert(state: CollectionState, filter: Filter, update: Doc): Promise<void> {
    const base = cloneValue(equalityFields(filter));
    const doc =
      this.#applyUpdate(base, { modifier: prepareModifier(update, true), condition: undefined }) ??
        base;
    const created = doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
    return this.#insertOne(state, created);
  }

  deleteOne(filter: Filter, options: WriteOptions = {}): Promise<number> {
    return run(() => this.#delete(this.#match(filter, 1), options.alongside));
  }

  deleteMany(filter: Filter, options: WriteOptions = {}): Promise<number> {
    return run(() => this.#delete(this.#match(filter), options.alongside));
  }

  #delete(
    hits: Array<[string, Doc]>,
    alongside?: WriteOptions["alongside"],
  ): Promise<number> {
    if (hits.length === 0) return Promise.resolve(0);
    const state = this.#state();
    const side = alongside && this.#prepareAlongside(alongside);
    const { db } = this.ctx;
    const durable = db.grouped(() => {
      for (const [id] of hits) db.stmts.deleteDoc.run(this.name, id);
      side?.write();
    });
    state.remove(hits);
    side?.apply();
    return durable.then(() => hits.length);
  }

  aggregate(pipeline: Doc[], options: AggregateOptions = {}): Promise<Doc[]> {
    // A `$text` in the first `$match` (where MongoDB takes it) searches the text index.
    const first = pipeline[0]?.$match;
    if (first !== undefined && holdsText(first)) {
      return loadStemmers().then(() =>
        run(() => {
          const { filter, score } = this.#textSearch(first as Filter, true);
          return runAggregate(this, [{ $match: filter }, ...pipeline.slice(1)], options, score);
        })
      );
    }
    return run(() => {
      // A result that follows from this collection's documents alone is remembered until
      // they change (count_cache.ts), and handed out as copies; not one of `let` variables.
      const key = options.let === undefined ? pipelineKey(pipeline) : undefined;
      if (key === undefined) return runAggregate(this, pipeline, options);
      const counts = this.#state().counts;
      const known = counts.result(key);
      if (known !== undefined) return known.map(cloneValue);
      const out = runAggregate(this, pipeline, options);
      if (smallResult(out)) counts.setResult(key, out.map(cloneValue));
      return out;
    });
  }

  /**
   * What a leading `$geoNear` passes on (see aggregate.ts): the documents its near query finds,
   * nearest first (refused as a `find` would refuse it), each with the distance in the query's
   * units times `distanceMultiplier`, and the location with `includeLocs`. Not deep copies.
   */
  geoNear(spec: unknown): Doc[] {
    const indexes = [...this.#state().indexSpecs.values()].map((index) => index.keys);
    const stage = readGeoNear(spec, indexes);
    const docs = this.#find(stage.filter, {});
    const near = readNear(stage.filter)!;
    const distance = stage.distanceField.split(".");
    const locs = stage.includeLocs?.split(".");
    return docs.map((doc) => {
      const location = getPath(doc, near.field);
      const out = withField(doc, distance, distanceOf(near, location) * stage.multiplier);
      return locs ? withField(out, locs, location) : out;
    });
  }

  /** Time bound of one aggregation (QUERY_TIMEOUT_MS). */
  get timeoutMs(): number {
    return this.ctx.queryTimeoutMs ?? 0;
  }

  /** mingo options of the store (for aggregation). */
  get options(): Partial<Options> {
    return this.ctx.options;
  }

  /** Another collection of the same store. */
  sibling(name: string): EmbeddedCollection {
    return new EmbeddedCollection(name, this.ctx);
  }

  /** The stored documents in natural order (shared: never mutate or hand out). */
  snapshot(): Doc[] {
    return this.#state().snapshot();
  }

  /** Columns of top-level fields over {@link snapshot} (shared: never mutate or hand out). */
  columns(fields: readonly string[], timeout: Timeout | null): unknown[][] | null {
    return this.#state().columns(fields, timeout);
  }

  /** Replaces the whole content of the collection (for `$out`), atomically. */
  replaceAll(docs: Doc[]): void {
    const state = this.#state();
    const changes: Change[] = [];
    const ids = new Set<string>();
    for (const input of docs) {
      const doc = input._id === undefined ? { _id: new ObjectId(), ...input } : cloneValue(input);
      const id = idKeyOf(doc);
      if (ids.has(id)) throw idDuplicate(this.name);
      ids.add(id);
      changes.push({ id, after: doc });
    }
    const old = [...state.docs];
    // Check uniqueness as if the collection were empty.
    state.remove(old);
    try {
      for (const index of state.unique) checkUnique(index, changes, this.name);
    } catch (err) {
      state.apply(old.map(([id, after]) => ({ id, after })));
      throw err;
    }
    const { db } = this.ctx;
    try {
      db.transaction(() => {
        this.#ensureExists(state);
        db.stmts.deleteDocs.run(this.name);
        for (const c of changes) db.stmts.insertDoc.run(this.name, c.id, encodeDoc(c.after));
      });
    } catch (err) {
      state.apply(old.map(([id, after]) => ({ id, after })));
      throw err;
    }
    state.exists = true;
    state.apply(changes);
  }

  /** Writes `changes` (inserts and replacements) for `$merge`. */
  mergeChanges(changes: Change[]): void {
    const state = this.#state();
    for (const c of changes) {
      if (!c.before && state.docs.has(c.id)) throw idDuplicate(this.name);
    }
    const inserts = changes.filter((c) => !c.before);
    const updates = changes.filter((c) => c.before);
    for (const index of state.unique) checkUnique(index, changes, this.name);
    state.holdReplaced(updates);
    const { db } = this.ctx;
    db.transaction(() => {
      this.#ensureExists(state);
      for (const c of inserts) db.stmts.insertDoc.run(this.name, c.id, encodeDoc(c.after));
      for (const c of updates) db.stmts.updateDoc.run(encodeDoc(c.after), this.name, c.id);
    });
    state.exists = true;
    state.apply(changes);
  }

  /** The stored document with `_id` key `id`, if any. */
  byId(id: string): Doc | undefined {
    return this.#state().docs.get(id);
  }

  distinct(field: string, filter: Filter = {}): Promise<unknown[]> {
    return run(() => {
      const parts = field.split(".");
      const seen = new Map<string, unknown>();
      for (const [, doc] of this.#match(filter)) {
        for (const v of pathValues(doc, parts)) {
          if (v === undefined || v === EMPTY) continue;
          const key = valueKey(v);
          if (!seen.has(key)) seen.set(key, v);
        }
      }
      return [...seen.values()].sort(compareValues).map(cloneValue);
    });
  }

  /**
   * Creates an index; an existing one with the same name or keys is kept when equivalent
   * and replaced when its options differ (the new definition is checked against the data
   * first).
   */
  createIndex(spec: IndexSpec): Promise<void> {
    return run(() => {
      const state = this.#state();
      const stored: IndexSpec = { ...spec, name: indexName(spec) };
      const keys = JSON.stringify(spec.keys);
      const existing = [...state.indexSpecs.values()].filter((s) =>
        s.name === stored.name || JSON.stringify(s.keys) === keys
      );
      if (existing.length === 1 && sameIndex(existing[0], stored)) return;
      const index = state.buildIndex(stored);
      const { db } = this.ctx;
      db.transaction(() => {
        this.#ensureExists(state);
        for (const old of existing) db.stmts.deleteIndex.run(this.name, old.name!);
        db.stmts.insertIndex.run(
          this.name,
          stored.name!,
          EJSON.stringify(stored, { relaxed: false }),
        );
      });
      state.exists = true;
      for (const old of existing) state.dropIndex(old.name!);
      state.addIndex(stored, index);
    });
  }

  drop(): Promise<void> {
    return run(() => {
      this.ctx.db.assertOpen();
      const { db } = this.ctx;
      db.transaction(() => {
        db.stmts.deleteDocs.run(this.name);
        db.stmts.deleteIndexes.run(this.name);
        db.stmts.deleteCollection.run(this.name);
      });
      this.ctx.reset(this.name);
    });
  }
}

/**
 * Runs synchronous store work as a promise, turning throws into rejections. Errors that
 * are neither store failures nor duplicate keys come from the query engine refusing the
 * query, update or pipeline.
 */
function run<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    if (
      err instanceof StoreError || err instanceof DuplicateKeyError ||
      err instanceof QueryTimeoutError || err instanceof InvalidQueryError ||
      !(err instanceof Error)
    ) {
      return Promise.reject(err);
    }
    return Promise.reject(
      new InvalidQueryError(err.message, { cause: err, reason: engineReason(err.message) }),
    );
  }
}

const DONE: Promise<void> = Promise.resolve();

/**
 * The deadline of one scan (QUERY_TIMEOUT_MS; `timeoutMs` 0: none): the scan counts
 * `left` down per document and calls {@link check} at 0. The clock (an op, ~0.1 us) is read
 * after 64 documents, then after twice as many each time the documents between two readings
 * took under a millisecond (at most 1,024), and after 64 again otherwise: a count over 1,000
 * documents reads it 5 times, where reading it every 64 took as long as testing 250 of
 * them. One document's test is
 * bounded by the query sandbox, so the scan stops at most 1,024 short tests, or 64 long ones,
 * past the deadline.
 */
class ScanClock {
  readonly on: boolean;
  left = 64;
  stride = 64;
  #last: number;
  readonly #deadline: number;
  constructor(readonly timeoutMs: number) {
    this.on = timeoutMs > 0;
    this.#last = this.on ? performance.now() : 0;
    this.#deadline = this.#last + timeoutMs;
  }

  check(): void {
    const now = performance.now();
    if (now > this.#deadline) throw new QueryTimeoutError(`query exceeded ${this.timeoutMs} ms`);
    if (this.stride < 4096) {
      this.stride = now - this.#last < 1 ? Math.min(this.stride * 2, 1024) : 64;
    }
    this.left = this.stride;
    this.#last = now;
  }
}

function idDuplicate(collection: string): DuplicateKeyError {
  return new DuplicateKeyError(
    ["_id"],
    `E11000 duplicate key error collection: ${collection} index: _id_`,
  );
}

function immutableId(): Error {
  return new Error("Performing an update on the path '_id' would modify the immutable field '_id'");
}

/**
 * Copies an update document (so stored documents never share the caller's objects) and
 * resolves `$setOnInsert`: merged into `$set` on insert, dropped otherwise.
 */
function prepareModifier(update: Doc | Doc[], inserting: boolean): Doc | Doc[] {
  if (Array.isArray(update)) return cloneValue(update);
  const out: Doc = {};
  for (const [op, fields] of Object.entries(update)) {
    if (op[0] !== "$") {
      throw new Error(`update document requires atomic operators, found '${op}'`);
    }
    if (op === "$setOnInsert") continue;
    out[op] = cloneValue(fields);
  }
  if (inserting && update.$setOnInsert) {
    out.$set = { ...(out.$set as Doc ?? {}), ...cloneValue(update.$setOnInsert as Doc) };
  }
  return out;
}

function sameIndex(a: IndexSpec, b: IndexSpec): boolean {
  const canon = (s: IndexSpec) =>
    EJSON.stringify(
      [
        s.name,
        s.keys,
        !!s.unique,
        s.partialFilterExpression ?? null,
        !!s.sparse,
        s.expireAfterSeconds ?? null,
        s.options ?? null,
      ],
      { relaxed: false },
    );
  return canon(a) === canon(b);
}

function usesPositional(modifier: Doc | Doc[]): boolean {
  if (Array.isArray(modifier)) return false;
  for (const fields of Object.values(modifier)) {
    if (fields && typeof fields === "object") {
      for (const k of Object.keys(fields)) if (k.includes("$")) return true;
    }
  }
  return false;
}

/** Whether the first member of `doc` (in the order its members are written) is `_id`. */
function firstKeyIsId(doc: Doc): boolean {
  for (const key in doc) return key === "_id";
  return false;
}
