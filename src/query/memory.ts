/**
 * Filters and projections evaluated on one document in memory (the change feed checks each
 * changed document against a feed's filter). The filter must already be checked by this
 * layer (`parseWhere`, the read policy): evaluation uses the shared document matcher
 * (src/doc/match/), with its linear-time regular expressions and no scripts.
 */
import type { Doc, Filter, Projection } from "../store/store.ts";
import { compileFilter, engineOptions, projectDocument } from "../doc/match/engine.ts";

/** A compiled test of one document. */
export type DocumentTest = (doc: Doc) => boolean;

const OPTIONS = engineOptions();

/**
 * Compiles `filter` once; the test answers false for a document it cannot evaluate (a
 * `$divide` by a stored zero ...), after telling `unevaluable` why.
 * @throws InvalidQueryError when the engine refuses the filter itself (answered 400, as a
 * GET with the same filter is).
 */
export function documentTest(
  filter: Filter,
  unevaluable?: (doc: Doc, error: unknown) => void,
): DocumentTest {
  const test = compileFilter(filter, OPTIONS);
  return (doc) => {
    try {
      return test(doc);
    } catch (error) {
      unevaluable?.(doc, error);
      return false;
    }
  };
}

/** A projected deep copy of `doc` (`doc` itself is left as it is). */
export function projected(doc: Doc, projection: Projection | undefined): Doc {
  return projectDocument(doc, projection, OPTIONS);
}
