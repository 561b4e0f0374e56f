/**
 * `$dateFromString` as MongoDB computes it: a date from its text, read with a `format` or as
 * ISO 8601 (`2021-06-01`, `2021-06-01T12:30:00.250+02:00`, a space for the `T`, slashes for
 * the dashes), in the string's own offset or else the `timezone` given (UTC by default).
 *
 * mingo's read only the exact default format `%Y-%m-%dT%H:%M:%S.%LZ` without a format (an
 * offset such as `+02:00`, a date alone or no milliseconds gave nothing at all), ignored an
 * Olson time zone's daylight saving time, and gave undefined for a text it could not read
 * where MongoDB raises an error (or gives `onError`).
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator(
 *   [{ $project: { _id: 0, d: { $dateFromString: { dateString: "2021-06-01T12:00:00+02:00" } } } }],
 *   engineOptions(),
 * ).run([{}]); // [{ d: 2021-06-01T10:00:00Z }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { checkFormat, instantOf, MONTHS } from "./dates.ts";

const ARGUMENTS = new Set(["dateString", "format", "timezone", "onError", "onNull"]);

/** The parts a text gives; the offset (seconds) when it carries one. */
interface Fields {
  year?: number;
  month?: number;
  day?: number;
  dayOfYear?: number;
  isoYear?: number;
  isoWeek?: number;
  isoDay?: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  offset?: number;
}

/** A text MongoDB would not read as a date (`onError` answers it when given). */
class Unreadable extends Error {}

const ISO =
  /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

const MONTH_NAMES = MONTHS.map((name) => name.toLowerCase());

/** An offset as text (`Z`, `+02`, `+0200`, `+02:00`) in seconds. */
function offsetOf(text: string): number {
  if (text.toUpperCase() === "Z") return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(text)!;
  const seconds = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60;
  return m[1] === "-" ? -seconds : seconds;
}

/** The fields of an ISO 8601 text. */
function readIso(text: string): Fields {
  const m = ISO.exec(text.trim());
  if (!m) throw new Unreadable(`$dateFromString cannot read ${JSON.stringify(text)} as a date`);
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    millisecond: Number((m[7] ?? "0").slice(0, 3).padEnd(3, "0")),
    offset: m[8] === undefined ? undefined : offsetOf(m[8]),
  };
}

/** How each format specifier reads: a pattern at the text's current place, and the field. */
const READERS: Record<string, { re: RegExp; set: (f: Fields, text: string) => void }> = {
  Y: { re: /^\d{4}/, set: (f, t) => f.year = Number(t) },
  m: { re: /^\d{1,2}/, set: (f, t) => f.month = Number(t) },
  d: { re: /^\d{1,2}/, set: (f, t) => f.day = Number(t) },
  H: { re: /^\d{1,2}/, set: (f, t) => f.hour = Number(t) },
  M: { re: /^\d{2}/, set: (f, t) => f.minute = Number(t) },
  S: { re: /^\d{2}/, set: (f, t) => f.second = Number(t) },
  L: { re: /^\d{1,3}/, set: (f, t) => f.millisecond = Number(t.padEnd(3, "0")) },
  j: { re: /^\d{1,3}/, set: (f, t) => f.dayOfYear = Number(t) },
  G: { re: /^\d{4}/, set: (f, t) => f.isoYear = Number(t) },
  V: { re: /^\d{1,2}/, set: (f, t) => f.isoWeek = Number(t) },
  u: { re: /^[1-7]/, set: (f, t) => f.isoDay = Number(t) },
  w: { re: /^[1-7]/, set: () => {} },
  z: { re: /^(?:Z|[+-]\d{2}(?::?\d{2})?)/i, set: (f, t) => f.offset = offsetOf(t) },
  Z: { re: /^[+-]\d{1,4}/, set: (f, t) => f.offset = Number(t) * 60 },
  b: {
    re: /^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i,
    set: (f, t) => f.month = MONTH_NAMES.findIndex((m) => m.startsWith(t.toLowerCase())) + 1,
  },
  B: {
    re:
      /^(?:january|february|march|april|may|june|july|august|september|october|november|december)/i,
    set: (f, t) => f.month = MONTH_NAMES.indexOf(t.toLowerCase()) + 1,
  },
};

/** The fields of `text` read with `format` (checked), every character of both used. */
function readFormatted(text: string, format: string): Fields {
  const fields: Fields = { hour: 0, minute: 0, second: 0, millisecond: 0 };
  let at = 0;
  const unreadable = () =>
    new Unreadable(
      `$dateFromString cannot read ${JSON.stringify(text)} with the format ${
        JSON.stringify(format)
      }`,
    );
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== "%" || format[i + 1] === "%") {
      if (text[at] !== c) throw unreadable();
      at++;
      if (c === "%") i++;
      continue;
    }
    const reader = READERS[format[++i]];
    const m = reader.re.exec(text.slice(at));
    if (!m) throw unreadable();
    reader.set(fields, m[0]);
    at += m[0].length;
  }
  if (at !== text.length) throw unreadable();
  return fields;
}

/** The local time (ms, read as UTC) the fields name, each within its range. */
function localTime(fields: Fields): number {
  const local = new Date(0);
  if (fields.isoYear !== undefined) {
    const week = fields.isoWeek ?? 1;
    const day = fields.isoDay ?? 1;
    if (week < 1 || week > 53) {
      throw new Unreadable("$dateFromString: the ISO week is out of range");
    }
    local.setUTCFullYear(fields.isoYear, 0, 4);
    const monday = local.getUTCDate() - ((local.getUTCDay() || 7) - 1);
    local.setUTCFullYear(fields.isoYear, 0, monday + (week - 1) * 7 + (day - 1));
  } else {
    const { year, dayOfYear } = fields;
    if (year === undefined) throw new Unreadable("$dateFromString: the text gives no year");
    if (dayOfYear !== undefined && fields.month === undefined) {
      const days = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 366 : 365;
      if (dayOfYear < 1 || dayOfYear > days) {
        throw new Unreadable("$dateFromString: the day of the year is out of range");
      }
      local.setUTCFullYear(year, 0, dayOfYear);
    } else {
      const month = fields.month ?? 1;
      const day = fields.day ?? 1;
      const last = new Date(0);
      last.setUTCFullYear(year, month, 0);
      if (month < 1 || month > 12 || day < 1 || day > last.getUTCDate()) {
        throw new Unreadable("$dateFromString: the month or the day is out of range");
      }
      local.setUTCFullYear(year, month - 1, day);
    }
  }
  const { hour, minute, second, millisecond } = fields;
  if (hour > 23 || minute > 59 || second > 59) {
    throw new Unreadable("$dateFromString: the time of day is out of range");
  }
  local.setUTCHours(hour, minute, second, millisecond);
  return local.getTime();
}

/**
 * `$dateFromString: {dateString, format, timezone, onError, onNull}`: null when the format or
 * the time zone is null, `onNull` (else null) when the text is null or missing; `onError`,
 * when given, answers a text that is not a date or carries an offset beside a `timezone`.
 */
export function $dateFromString(obj: Doc, expr: unknown, options: Options): unknown {
  const op = "$dateFromString";
  if (!isPlainObject(expr)) throw new Error(`${op} takes a document of arguments`);
  for (const key of Object.keys(expr)) {
    if (!ARGUMENTS.has(key)) throw new Error(`${op} does not take '${key}'`);
  }
  if (!Object.hasOwn(expr, "dateString")) throw new Error(`${op} needs a 'dateString'`);
  const evaluate = (key: string) => evalExpr(obj as never, expr[key] as never, options);
  const format = Object.hasOwn(expr, "format") ? evaluate("format") : undefined;
  const zone = Object.hasOwn(expr, "timezone") ? evaluate("timezone") : undefined;
  if (Object.hasOwn(expr, "format") && (format === null || format === undefined)) return null;
  if (Object.hasOwn(expr, "timezone") && (zone === null || zone === undefined)) return null;
  if (format !== undefined && typeof format !== "string") {
    throw new Error(`${op}: the format must be a string`);
  }
  if (zone !== undefined && typeof zone !== "string") {
    throw new Error(`${op}: the timezone must be a string`);
  }
  if (format !== undefined) {
    checkFormat(op, format, (c) => c === "%" || Object.hasOwn(READERS, c));
  }
  const text = evaluate("dateString");
  if (text === null || text === undefined) {
    return Object.hasOwn(expr, "onNull") ? evaluate("onNull") : null;
  }
  try {
    if (typeof text !== "string") throw new Unreadable(`${op} needs a string`);
    const fields = format === undefined ? readIso(text) : readFormatted(text, format);
    const local = localTime(fields);
    if (fields.offset !== undefined && zone !== undefined) {
      throw new Unreadable(`${op}: the text carries an offset and a timezone is given too`);
    }
    const ms = fields.offset !== undefined
      ? local - fields.offset * 1000
      : instantOf(local, zone ?? "UTC");
    return new Date(ms);
  } catch (err) {
    if (err instanceof Unreadable && Object.hasOwn(expr, "onError")) return evaluate("onError");
    throw err;
  }
}
