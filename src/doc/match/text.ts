/**
 * @module
 * `$text` on the embedded store, as MongoDB's text index (version 3) reads text: words are
 * split at Unicode delimiters (white space, dashes, hyphens, quotation marks, terminal and
 * syntax punctuation; in English an apostrophe belongs to its word), case-folded, stop words
 * dropped (English), stemmed with the Snowball stemmer of the language, and stripped of
 * diacritics. A search is MongoDB's too: terms (any one matches), `"phrases"` (each must
 * appear, case- and diacritic-insensitively), and `-negations` of either; with no term left
 * after stop words, nothing matches.
 *
 * The stemmers are loaded on first use ({@link loadStemmers}), since most services never
 * search text.
 *
 * @example
 * ```ts
 * await loadStemmers();
 * const test = textMatcher(readTextSearch({ $search: "running -shoes" }, { fields: ["title"] }));
 * test({ title: "She runs daily" }); // true: "running" and "runs" both stem to "run"
 * ```
 */
import { holdsKey, isPlainObject } from "../../util/plain.ts";
import { type Doc, InvalidQueryError } from "../types.ts";
import { pathValues } from "./compare.ts";

/** The text index a search reads (from the collection's index with `"text"` keys). */
export interface TextIndex {
  /** The indexed fields (dotted paths); `"$**"` indexes every string. */
  fields: string[];
  /** `default_language` (`"english"` unless given). */
  defaultLanguage?: string;
  /** `language_override`: the field naming a document's own language (`"language"`). */
  languageOverride?: string;
  /** `weights`: what each field counts for in a score (1 when not given). */
  weights?: Record<string, unknown>;
}

/** English stop words (the Snowball list, as MongoDB's text index drops them). */
const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  ("i me my myself we our ours ourselves you your yours yourself yourselves he him his " +
    "himself she her hers herself it its itself they them their theirs themselves what which " +
    "who whom this that these those am is are was were be been being have has had having do " +
    "does did doing would should could ought i'm you're he's she's it's we're they're i've " +
    "you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll " +
    "they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't " +
    "wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's " +
    "there's when's where's why's how's a an the and but if or because as until while of at " +
    "by for with about against between into through during before after above below to from " +
    "up down in out on off over under again further then once here there when where why how " +
    "all any both each few more most other some such no nor not only own same so than too " +
    "very").split(" "),
);

/** MongoDB's text languages (names and ISO codes) and the Snowball stemmer of each. */
const LANGUAGES: Readonly<Record<string, string>> = {
  danish: "danish",
  da: "danish",
  dutch: "dutch",
  nl: "dutch",
  english: "english",
  en: "english",
  finnish: "finnish",
  fi: "finnish",
  french: "french",
  fr: "french",
  german: "german",
  de: "german",
  hungarian: "hungarian",
  hu: "hungarian",
  italian: "italian",
  it: "italian",
  norwegian: "norwegian",
  nb: "norwegian",
  portuguese: "portuguese",
  pt: "portuguese",
  romanian: "romanian",
  ro: "romanian",
  russian: "russian",
  ru: "russian",
  spanish: "spanish",
  es: "spanish",
  swedish: "swedish",
  sv: "swedish",
  turkish: "turkish",
  tr: "turkish",
  none: "none",
};

/** A language's name as MongoDB takes it, or null when it is not one. */
function languageOf(name: string): string | null {
  return Object.hasOwn(LANGUAGES, name.toLowerCase()) ? LANGUAGES[name.toLowerCase()] : null;
}

type Stemmer = (word: string) => string;

let stemmerFactory: ((language: string) => { stem(word: string): string }) | undefined;
const stemmers = new Map<string, Stemmer>();

/** Loads the Snowball stemmers (once; every later call resolves at once). */
export async function loadStemmers(): Promise<void> {
  if (stemmerFactory) return;
  const mod = await import("snowball-stemmers");
  const factory = ((mod as { default?: unknown }).default ?? mod) as {
    newStemmer(language: string): { stem(word: string): string };
  };
  stemmerFactory = (language) => factory.newStemmer(language);
}

/** Words stemmed per language, remembered (a vocabulary repeats across documents). */
const MAX_STEMS = 50_000;

function stemmerOf(language: string): Stemmer {
  let stem = stemmers.get(language);
  if (!stem) {
    if (language === "none") stem = (word) => word;
    else {
      if (!stemmerFactory) throw new Error("text stemmers not loaded (loadStemmers)");
      const stemmer = stemmerFactory(language);
      const known = new Map<string, string>();
      stem = (word) => {
        let stemmed = known.get(word);
        if (stemmed === undefined) {
          stemmed = stemmer.stem(word);
          if (known.size >= MAX_STEMS) known.clear();
          known.set(word, stemmed);
        }
        return stemmed;
      };
    }
    stemmers.set(language, stem);
  }
  return stem;
}

/**
 * Delimiters of MongoDB's tokenizer: the Unicode properties White_Space, Dash, Hyphen,
 * Quotation_Mark, Terminal_Punctuation, Pattern_Syntax and Sentence_Terminal (Hyphen, which
 * JavaScript does not name, by its code points). In English an apostrophe is no delimiter.
 */
const DELIMITERS = String.raw`\p{White_Space}\p{Dash}\p{Quotation_Mark}\p{Terminal_Punctuation}` +
  String.raw`\p{Pattern_Syntax}\p{Sentence_Terminal}\u00AD\u058A\u1806\u2010\u2011\u2E17` +
  String.raw`\u30FB\uFE63\uFF0D\uFF65`;
const SPLIT = new RegExp(`[${DELIMITERS}]+`, "u");
const SPLIT_ENGLISH = new RegExp(`(?:(?!')[${DELIMITERS}])+`, "u");

/** The words of `text`, split at delimiters. */
function words(text: string, english: boolean): string[] {
  return text.split(english ? SPLIT_ENGLISH : SPLIT).filter((word) => word !== "");
}

/** Whether `text` is ASCII alone (folded and free of diacritics without a table). */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Simple case folding, one code point at a time (a fold to several is left as it is). */
function fold(text: string): string {
  if (isAscii(text)) return text.toLowerCase();
  let out = "";
  for (const char of text) {
    const lower = char.toLowerCase();
    out += lower.length === char.length ? lower : char;
  }
  return out;
}

const DIACRITIC = /\p{Diacritic}/u;
const undiacritic = new Map<string, string>();

/**
 * `text` without diacritics: a diacritic mark goes, and a character that decomposes into a
 * base and marks becomes its base, as MongoDB's map does. (The ASCII diacritics `^` and the
 * backquote are delimiters, so an ASCII word has none.)
 */
function stripDiacritics(text: string): string {
  if (isAscii(text)) return text;
  let out = "";
  for (const char of text) {
    let plain = undiacritic.get(char);
    if (plain === undefined) {
      if (DIACRITIC.test(char)) plain = "";
      else {
        const base = [...char.normalize("NFD")].filter((c) => !DIACRITIC.test(c)).join("")
          .normalize("NFC");
        plain = base !== char && [...base].length === 1 ? base : char;
      }
      if (undiacritic.size < 10_000) undiacritic.set(char, plain);
    }
    out += plain;
  }
  return out;
}

interface TokenOptions {
  caseSensitive: boolean;
  diacriticSensitive: boolean;
}

/** The index terms of `text` in `language`, as MongoDB's tokenizer makes them. */
function terms(text: string, language: string, options: TokenOptions): string[] {
  const english = language === "english";
  const stem = stemmerOf(language);
  const out: string[] = [];
  for (const word of words(text, english)) {
    const lower = fold(word);
    if (english && ENGLISH_STOP_WORDS.has(lower)) continue;
    let term = stem(options.caseSensitive ? word : lower);
    if (!options.diacriticSensitive) term = stripDiacritics(term);
    out.push(term);
  }
  return out;
}

/** A `$search` string read as MongoDB reads it. */
interface Search {
  positive: Set<string>;
  negated: Set<string>;
  phrases: string[];
  negatedPhrases: string[];
}

/** MongoDB's query parser: white space, `-` and `"` delimit; other characters make text. */
function parseSearch(search: string, language: string, options: TokenOptions): Search {
  const isSpace = (c: string) => c === " " || c === "\n" || c === "\v" || c === "\f" || c === "\r";
  let positive = "";
  let negative = "";
  const phrases: string[] = [];
  const negatedPhrases: string[] = [];
  let inNegation = false;
  let inPhrase = false;
  let quoteAt = 0;
  let pos = 0;
  while (pos < search.length && isSpace(search[pos])) pos++;
  let previousSpace = true;
  while (pos < search.length) {
    const start = pos++;
    const delimiter = search[start] === "-" || search[start] === '"';
    if (!delimiter) {
      while (
        pos < search.length && !isSpace(search[pos]) && search[pos] !== "-" &&
        search[pos] !== '"'
      ) pos++;
    }
    const token = search.slice(start, pos);
    const spaceBefore = previousSpace;
    const skipped = pos;
    while (pos < search.length && isSpace(search[pos])) pos++;
    previousSpace = pos > skipped;
    if (!delimiter) {
      if (inPhrase && inNegation) continue;
      if (inNegation && spaceBefore) inNegation = false;
      if (inNegation) negative += token + " ";
      else positive += token + " ";
    } else if (token === "-") {
      if (!inPhrase && spaceBefore) inNegation = true;
    } else if (inPhrase) {
      const phrase = search.slice(quoteAt + 1, start);
      (inNegation ? negatedPhrases : phrases).push(phrase);
      inPhrase = false;
    } else {
      inPhrase = true;
      if (inNegation && spaceBefore) inNegation = false;
      quoteAt = start;
    }
  }
  return {
    positive: new Set(terms(positive, language, options)),
    negated: new Set(terms(negative, language, options)),
    phrases,
    negatedPhrases,
  };
}

/** The query refused with MongoDB's words, shown to the client as the database's reason. */
function refuse(reason: string): never {
  throw new InvalidQueryError(reason, { reason });
}

/** The `$text` arguments MongoDB takes. */
const TEXT_ARGUMENTS = new Set(["$search", "$language", "$caseSensitive", "$diacriticSensitive"]);

/** A `$text` condition read against a text index, by {@link readTextSearch}. */
export interface TextSearch {
  index: TextIndex;
  /** The index's default language, for documents that name none (or one it lacks). */
  defaultLanguage: string;
  options: TokenOptions;
  /** The search read in its language, with its case and diacritic options. */
  search: Search;
  /** The search read as the index holds terms (no case, no diacritics): what a score counts. */
  indexTerms: Search;
}

const PLAIN: TokenOptions = { caseSensitive: false, diacriticSensitive: false };

/**
 * A `$text` condition `spec` on the text index `index` (stemmers loaded:
 * {@link loadStemmers}); a malformed condition is refused as MongoDB does.
 */
export function readTextSearch(spec: unknown, index: TextIndex): TextSearch {
  if (!isPlainObject(spec)) refuse("$text expects an object");
  for (const key of Object.keys(spec)) {
    if (!TEXT_ARGUMENTS.has(key)) refuse(`Unexpected field in $text: ${key}`);
  }
  if (typeof spec.$search !== "string") refuse("$search required and must be a string");
  for (const flag of ["$caseSensitive", "$diacriticSensitive"]) {
    if (spec[flag] !== undefined && typeof spec[flag] !== "boolean") {
      refuse(`${flag} requires a boolean value`);
    }
  }
  const defaultLanguage = languageOf(index.defaultLanguage ?? "english") ?? "english";
  let language = defaultLanguage;
  if (spec.$language !== undefined) {
    const given = typeof spec.$language === "string" ? languageOf(spec.$language) : null;
    if (given === null) {
      refuse(`unsupported language: ${JSON.stringify(spec.$language)} for text index version 3`);
    }
    language = given;
  }
  const options: TokenOptions = {
    caseSensitive: spec.$caseSensitive === true,
    diacriticSensitive: spec.$diacriticSensitive === true,
  };
  const search = parseSearch(spec.$search, language, options);
  const plain = !options.caseSensitive && !options.diacriticSensitive;
  const indexTerms = plain ? search : parseSearch(spec.$search, language, PLAIN);
  return { index, defaultLanguage, options, search, indexTerms };
}

/** The language `doc` is read in: its own (`language_override`), or the index's default. */
function languageOfDocument(text: TextSearch, doc: Doc): string {
  const own = doc[text.index.languageOverride ?? "language"];
  return typeof own === "string" ? languageOf(own) ?? text.defaultLanguage : text.defaultLanguage;
}

/** The test of documents against the search `text`. */
export function textMatcher(text: TextSearch): (doc: Doc) => boolean {
  const { search, options, index } = text;
  // The index holds documents by positive terms: with none, nothing is found.
  if (search.positive.size === 0) return () => false;
  const normalize = (raw: string) => {
    const folded = options.caseSensitive ? raw : fold(raw);
    return options.diacriticSensitive ? folded : stripDiacritics(folded);
  };
  const phrases = search.phrases.map(normalize);
  const negatedPhrases = search.negatedPhrases.map(normalize);
  // With nothing to rule a document out, its first term found decides.
  const decisive = search.negated.size === 0 && phrases.length === 0 &&
    negatedPhrases.length === 0;
  return (doc) => {
    const language = languageOfDocument(text, doc);
    const texts = indexedStrings(doc, index.fields);
    let positive = false;
    for (const raw of texts) {
      for (const term of terms(raw, language, options)) {
        if (search.negated.has(term)) return false;
        if (search.positive.has(term)) {
          if (decisive) return true;
          positive = true;
        }
      }
    }
    if (!positive || decisive) return positive;
    const normalized = texts.map(normalize);
    return phrases.every((p) => normalized.some((t) => t.includes(p))) &&
      !negatedPhrases.some((p) => normalized.some((t) => t.includes(p)));
  };
}

/** How deep a `$**` index reads a document. */
const MAX_DEPTH = 100;

/** The strings of `doc` that `fields` index (`$**`: every string, at any depth). */
function indexedStrings(doc: Doc, fields: string[]): string[] {
  const out: string[] = [];
  const collect = (value: unknown, depth: number) => {
    if (typeof value === "string") out.push(value);
    else if (depth < MAX_DEPTH && Array.isArray(value)) {
      for (const member of value) collect(member, depth + 1);
    } else if (depth < MAX_DEPTH && isPlainObject(value)) {
      for (const key of Object.keys(value)) collect(value[key], depth + 1);
    }
  };
  for (const field of fields) {
    if (field === "$**") collect(doc, 0);
    else {
      for (const value of pathValues(doc, field.split("."))) {
        if (typeof value === "string") out.push(value);
      }
    }
  }
  return out;
}

const TEXT_KEY: ReadonlySet<string> = new Set(["$text"]);

/** Whether `value` holds a `$text` key at any depth (looked for without allocating). */
export function holdsText(value: unknown): boolean {
  return holdsKey(value, TEXT_KEY);
}

/** The expression operator a rewritten `$text` becomes (see {@link withTextMatcher}). */
export const TEXT_MATCH = "$__embeddedText";

/** The engine's operator for {@link TEXT_MATCH}: the test the store made, on the document. */
export const textExpressionOperators = {
  [TEXT_MATCH]: (obj: unknown, test: unknown): boolean => {
    if (typeof test !== "function") {
      const reason = `unknown operator ${TEXT_MATCH}`;
      throw new InvalidQueryError(reason, { reason });
    }
    return (test as (doc: Doc) => boolean)(obj as Doc);
  },
};

/**
 * `filter` with its `$text` condition (at the top, or in a top-level `$and`) replaced by the
 * test `make` builds of it, as the engine runs it (`{"$expr": {TEXT_MATCH: test}}`); a second
 * one, or one anywhere else, is refused as MongoDB refuses it.
 */
export function withTextMatcher(
  filter: Doc,
  make: (spec: unknown) => (doc: Doc) => boolean,
): Doc {
  let found = 0;
  const rewrite = (part: Doc): Doc => {
    const out: Doc = {};
    for (const key of Object.keys(part)) {
      const value = part[key];
      if (key === "$text") {
        if (++found > 1) refuse("Too many text expressions");
        out.$and = [...(Array.isArray(out.$and) ? out.$and : []), {
          $expr: { [TEXT_MATCH]: make(value) },
        }];
      } else if (key === "$and" && Array.isArray(value)) {
        const members = value.map((m) => isPlainObject(m) ? rewrite(m) : m);
        out.$and = [...(Array.isArray(out.$and) ? out.$and : []), ...members];
      } else {
        if (holdsText(value)) {
          refuse("$text may stand only at the top of a filter or in a top-level $and");
        }
        out[key] = value;
      }
    }
    return out;
  };
  return rewrite(filter);
}

/**
 * The text score of a document a `$text` search found, kept on the document the pipeline
 * works on (`{"$meta": "textScore"}` reads it), as MongoDB keeps it as metadata.
 */
export const TEXT_SCORE: unique symbol = Symbol("textScore");

/**
 * The score MongoDB gives a document for the search `text`: for each term of the search, what
 * the term weighs in each indexed string, summed. In one string a term found `n` times among
 * `tokens` words weighs the field's weight times `1 + 1/2 + ... + 1/2^(n-1)` times
 * `0.5 + 0.5 n / tokens`, a tenth more when the string is that very term.
 */
export function textScorer(text: TextSearch): (doc: Doc) => number {
  const { index, indexTerms } = text;
  const weights = index.weights ?? {};
  return (doc) => {
    const language = languageOfDocument(text, doc);
    const scores = new Map<string, number>();
    for (const field of index.fields) {
      const weight = typeof weights[field] === "number" ? weights[field] as number : 1;
      for (const raw of indexedStrings(doc, [field])) {
        const tokens = terms(raw, language, PLAIN);
        const counts = new Map<string, number>();
        for (const term of tokens) counts.set(term, (counts.get(term) ?? 0) + 1);
        for (const [term, count] of counts) {
          const frequency = 2 - 2 ** (1 - count);
          const coefficient = 0.5 * count / tokens.length + 0.5;
          const exact = fold(raw) === fold(term) ? 1.1 : 1;
          scores.set(term, (scores.get(term) ?? 0) + weight * frequency * coefficient * exact);
        }
      }
    }
    let score = 0;
    for (const term of indexTerms.positive) score += scores.get(term) ?? 0;
    return score;
  };
}

/** `$meta`: a document's text score; MongoDB's other metadata is not kept here. */
export const metaExpressionOperators = {
  $meta: (obj: unknown, expr: unknown): number => {
    if (expr !== "textScore") refuse(`$meta ${JSON.stringify(expr)} runs on MongoDB only`);
    const score = (obj as { [TEXT_SCORE]?: number } | null)?.[TEXT_SCORE];
    if (score === undefined) {
      refuse("query requires text score metadata, but it is not available");
    }
    return score;
  },
};
