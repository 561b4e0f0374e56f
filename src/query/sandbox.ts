/**
 * The `$expr` sandbox: aggregation expressions in a `where` filter may use only an
 * allowlist of operators, and a static cost bound keeps array-building operators from
 * allocating unbounded memory or spinning the CPU (`$range` lengths, arrays built inside
 * `$map`/`$filter`/`$reduce` bodies, self-multiplying `$reduce` accumulators).
 */
import { QueryError } from "./errors.ts";
import { isPlainObject } from "../util/plain.ts";

/** Limits of one `$expr`; see the QUERY_MAX_RANGE and QUERY_EXPR_MAX_ELEMENTS settings. */
export interface ExpressionLimits {
  /** Longest `$range` (elements); its bounds must be literal numbers. */
  maxRange: number;
  /** Most array elements an expression may build, estimated statically. */
  maxElements: number;
}

/** Default limits: `$range` up to 1 000 elements, 100 000 elements built in all. */
export const DEFAULT_EXPRESSION_LIMITS: ExpressionLimits = { maxRange: 1000, maxElements: 100_000 };

/** Assumed length of an array whose length is not known statically (a field, a variable). */
export const UNKNOWN_ARRAY_LENGTH = 10_000;

/** Aggregation-expression operators allowed inside `$expr` (no code, no I/O). */
export const EXPRESSION_OPERATORS: ReadonlySet<string> = new Set([
  // arithmetic
  ..."abs add ceil divide exp floor ln log log10 mod multiply pow round sqrt subtract trunc"
    .split(" "),
  // array
  ..."arrayElemAt arrayToObject concatArrays filter first firstN in indexOfArray isArray last lastN map maxN minN objectToArray range reduce reverseArray size slice sortArray zip"
    .split(" "),
  // boolean, comparison, conditional
  ..."and not or cmp eq gt gte lt lte ne cond ifNull switch".split(" "),
  // date
  ..."dateAdd dateDiff dateFromParts dateFromString dateSubtract dateToParts dateToString dateTrunc dayOfMonth dayOfWeek dayOfYear hour isoDayOfWeek isoWeek isoWeekYear millisecond minute month second week year"
    .split(" "),
  // literal, object, misc, variables
  ..."literal mergeObjects getField setField unsetField let rand".split(" "),
  // set
  ..."allElementsTrue anyElementTrue setDifference setEquals setIntersection setIsSubset setUnion"
    .split(" "),
  // string
  ..."concat indexOfBytes indexOfCP ltrim regexFind regexFindAll regexMatch replaceOne replaceAll rtrim split strLenBytes strLenCP strcasecmp substr substrBytes substrCP toLower toString trim toUpper"
    .split(" "),
  // trigonometry
  ..."sin cos tan asin acos atan atan2 asinh acosh atanh sinh cosh tanh degreesToRadians radiansToDegrees"
    .split(" "),
  // type
  ..."convert isNumber toBool toDate toDecimal toDouble toInt toLong toObjectId type".split(" "),
  // accumulators usable as expressions
  ..."avg max min sum stdDevPop stdDevSamp".split(" "),
].map((name) => `$${name}`));

/** Expression operators that evaluate a regular expression: they count as `$regex`. */
export const REGEX_EXPRESSION_OPERATORS: readonly string[] = [
  "$regexMatch",
  "$regexFind",
  "$regexFindAll",
];

/** Operators whose result is an array built from their array arguments. */
const ARRAY_BUILDERS = new Set(
  ("concatArrays setUnion setIntersection setDifference zip map filter reverseArray slice " +
    "sortArray objectToArray split firstN lastN maxN minN regexFindAll").split(" ").map((n) =>
      `$${n}`
    ),
);

/** Operators that evaluate a body once per input element, and the body's argument names. */
const ITERATORS: Record<string, readonly string[]> = {
  $map: ["in"],
  $filter: ["cond"],
  $reduce: ["in"],
};

/** Operators that must not take the `$reduce` accumulator as input: they can multiply it. */
const MULTIPLYING = new Set(["$replaceAll", "$replaceOne", "$map", "$filter", "$reduce", "$zip"]);

/**
 * Checks one `$expr` argument; `black` is the effective DB_QUERY_BLACKLIST.
 * @throws QueryError (400) naming the refused operator or the exceeded limit.
 */
export function checkExpression(
  expr: unknown,
  black: ReadonlySet<string>,
  opts: { limits: ExpressionLimits; param: string },
): void {
  new Sandbox(black, opts.limits, opts.param).visit(expr, 1);
}

class Sandbox {
  private built = 0;

  constructor(
    private readonly black: ReadonlySet<string>,
    private readonly limits: ExpressionLimits,
    private readonly param: string,
  ) {}

  private fail(message: string): QueryError {
    return new QueryError(`${this.param}: ${message}`, this.param);
  }

  /** Visits `e`, evaluated `mult` times (statically estimated). */
  visit(e: unknown, mult: number): void {
    if (Array.isArray(e)) {
      for (const x of e) this.visit(x, mult);
      return;
    }
    if (!isPlainObject(e)) return;
    for (const key of Object.keys(e)) {
      if (key === "__proto__") throw this.fail(`"__proto__" is not allowed`);
      if (!key.startsWith("$")) {
        this.visit(e[key], mult);
        continue;
      }
      this.operator(key, e[key], mult);
    }
  }

  private operator(op: string, arg: unknown, mult: number): void {
    if (
      this.black.has(op) || (this.black.has("$regex") && REGEX_EXPRESSION_OPERATORS.includes(op))
    ) {
      throw this.fail(`operator ${op} is not allowed`);
    }
    if (!EXPRESSION_OPERATORS.has(op)) throw this.fail(`operator ${op} is not allowed in $expr`);
    if (op === "$literal") return;
    if (op === "$range") this.range(arg);
    if (ARRAY_BUILDERS.has(op) || op === "$range") this.charge(op, mult * this.size(op, arg));
    const bodies = ITERATORS[op];
    if (bodies && isPlainObject(arg)) {
      const inner = mult * Math.max(1, this.sizeOf(arg.input));
      if (op === "$reduce") this.checkAccumulator(arg.in);
      for (const [name, value] of Object.entries(arg)) {
        this.visit(value, bodies.includes(name) ? inner : mult);
      }
      return;
    }
    this.visit(arg, mult);
  }

  private charge(op: string, elements: number): void {
    this.built += elements;
    if (this.built > this.limits.maxElements) {
      throw this.fail(
        `${op}: the expression may build more than ${this.limits.maxElements} array elements ` +
          `(QUERY_EXPR_MAX_ELEMENTS)`,
      );
    }
  }

  /** `$range` needs literal numeric bounds and at most `maxRange` elements. */
  private range(arg: unknown): void {
    const len = rangeLength(arg);
    if (len === null) throw this.fail("$range needs literal integer bounds [start, end, step?]");
    if (len > this.limits.maxRange) {
      throw this.fail(
        `$range of ${len} elements exceeds ${this.limits.maxRange} (QUERY_MAX_RANGE)`,
      );
    }
  }

  /** Estimated length of the array an array-building operator returns. */
  private size(op: string, arg: unknown): number {
    if (op === "$range") return rangeLength(arg) ?? UNKNOWN_ARRAY_LENGTH;
    if (isPlainObject(arg)) {
      if (Object.hasOwn(arg, "input")) return this.sizeOf(arg.input);
      if (Object.hasOwn(arg, "inputs") && Array.isArray(arg.inputs)) {
        return sum(arg.inputs, (x) => this.sizeOf(x));
      }
      return UNKNOWN_ARRAY_LENGTH;
    }
    if (Array.isArray(arg)) return sum(arg, (x) => this.sizeOf(x));
    return this.sizeOf(arg);
  }

  /** Statically known length of an array-valued expression, else UNKNOWN_ARRAY_LENGTH. */
  private sizeOf(e: unknown): number {
    if (Array.isArray(e)) return e.length;
    if (isPlainObject(e)) {
      const keys = Object.keys(e);
      if (keys.length === 1 && keys[0] === "$range") {
        return rangeLength(e.$range) ?? UNKNOWN_ARRAY_LENGTH;
      }
      if (keys.length === 1 && keys[0] === "$literal" && Array.isArray(e.$literal)) {
        return e.$literal.length;
      }
    }
    return UNKNOWN_ARRAY_LENGTH;
  }

  /**
   * A `$reduce` body may use `$$value` at most once and never as input of an operator
   * that multiplies it, so the accumulator grows at most additively per element.
   */
  private checkAccumulator(body: unknown): void {
    let uses = 0;
    const walk = (e: unknown, multiplying: boolean): void => {
      if (typeof e === "string" && (e === "$$value" || e.startsWith("$$value."))) {
        uses++;
        if (multiplying) throw this.fail("$reduce: $$value may not be multiplied in 'in'");
      } else if (Array.isArray(e)) {
        for (const x of e) walk(x, multiplying);
      } else if (isPlainObject(e)) {
        for (const [k, v] of Object.entries(e)) walk(v, multiplying || MULTIPLYING.has(k));
      }
    };
    walk(body, false);
    if (uses > 1) throw this.fail("$reduce: $$value may be used only once in 'in'");
  }
}

function sum(list: unknown[], f: (x: unknown) => number): number {
  return list.reduce<number>((n, x) => n + f(x), 0);
}

/** Length of `$range: [start, end, step?]` with literal integers, else null. */
export function rangeLength(arg: unknown): number | null {
  if (!Array.isArray(arg) || arg.length < 2 || arg.length > 3) return null;
  const [start, end, step = 1] = arg;
  if (![start, end, step].every((x) => Number.isSafeInteger(x)) || step === 0) return null;
  return Math.max(0, Math.ceil((end - start) / step));
}
