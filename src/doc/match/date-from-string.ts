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
 * const read = { $dateFromString: { dateString: "2021-06-01T12:00:00+02:00" } };
 * new Aggregator([{ $project: { _id: 0, d: read } }], engineOptions())
 *   .run([{}]); // [{ d: 2021-06-01T10:00:00Z }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { checkFormat, instantOf, MONTHS } from "./dates.ts";
import { checkKeys } from "./arguments.ts";

const ARGUMENTS = ["dateString", "format", "timezone", "onError", "onNull"];

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

/** The longest text read as a date: a longer one is none (and costs no pattern's time). */
const MAX_TEXT = 256;

const MONTH_NAMES = MONTHS.map((name) => name.toLowerCase());

/** Zone abbreviations a text may end with, and their offsets in hours. */
const ZONES: Record<string, number> = {
  UTC: 0,
  UT: 0,
  GMT: 0,
  Z: 0,
  WET: 0,
  WEST: 1,
  BST: 1,
  CET: 1,
  CEST: 2,
  EET: 2,
  EEST: 3,
  EST: -5,
  EDT: -4,
  CST: -6,
  CDT: -5,
  MST: -7,
  MDT: -6,
  PST: -8,
  PDT: -7,
  AKST: -9,
  AKDT: -8,
  HST: -10,
};

/** A military zone letter's offset in hours (`A` +1 ... `M` +12, `N` -1 ... `Y` -12, `Z` 0). */
function militaryHours(letter: string): number | undefined {
  const c = letter.toUpperCase().charCodeAt(0) - 64;
  if (letter.length !== 1 || c < 1 || c > 26 || c === 10) return undefined;
  return c === 26 ? 0 : c < 10 ? c : c <= 13 ? c - 1 : -(c - 13);
}

/**
 * A zone written in a text, in seconds: `Z`, an offset (`+02`, `+0200`, `+02:00`), `GMT` or
 * `UTC` with or without an offset (`GMT+02`), an abbreviation such as `CEST` or `PDT`, or
 * (with `military`) a military letter. Undefined for what is none of these.
 */
function zoneSeconds(text: string, military = false): number | undefined {
  const t = text.trim().toUpperCase();
  const m = /^(?:(?:GMT|UTC|UT)\s*)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(t);
  if (m) {
    const seconds = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60;
    return m[1] === "-" ? -seconds : seconds;
  }
  const hours = Object.hasOwn(ZONES, t) ? ZONES[t] : military ? militaryHours(t) : undefined;
  return hours === undefined ? undefined : hours * 3600;
}

/**
 * A zone at the end of a text, after its time: `Z`, an offset, `GMT`/`UTC` with or without
 * one, or a known abbreviation (a date alone, such as `2021-06-01`, ends with no zone).
 */
const TRAILING_ZONE =
  /(?<=\d:\d{2}(?:[:.]\d{2}(?:[.,]\d+)?)?(?:\s*[ap]\.?m\.?)?)\s*((?:GMT|UTC|UT)?\s*[+-]\d{1,2}(?::?\d{2})?|[A-Za-z]{1,4})$/i;

/** The date forms read without a format: a pattern at the text's start; its year, day, month. */
const DATES: Array<
  { re: RegExp; read: (m: RegExpExecArray) => [number, number, string | number] }
> = [
  // 2021-06-01, 2021/06/01
  { re: /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})/, read: (m) => [+m[1], +m[3], +m[2]] },
  // 2021-Jun-01
  { re: /^(\d{4})-([a-z]{3,9})\.?-(\d{1,2})/i, read: (m) => [+m[1], +m[3], m[2]] },
  // 6/1/2021, 6/1/21 (month first)
  { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})(?!\d)/, read: (m) => [year(m[3]), +m[2], +m[1]] },
  // 01-06-2021, 01.06.2021 (day first)
  { re: /^(\d{1,2})[-.](\d{1,2})[-.](\d{4})/, read: (m) => [+m[3], +m[1], +m[2]] },
  // June 1, 2021; Jun 1st 2021
  {
    re: /^([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})/i,
    read: (m) => [+m[3], +m[2], m[1]],
  },
  // 1 June 2021, 01 Jun 2021
  {
    re: /^(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]{3,9})\.?,?\s+(\d{4})/i,
    read: (m) => [+m[3], +m[1], m[2]],
  },
];

/**
 * The time after a date read without a format: `T12:30`, ` 12:30:15.250` (or `12:30.15.250`, as
 * MongoDB reads it too), ` 11am`, ` noon`.
 */
const TIME =
  /^(?:(?:T|\s+|,\s*)(?:(\d{1,2}):(\d{2})(?:[:.](\d{2})(?:[.,](\d{1,9}))?)?(?:\s*([ap])\.?m\.?)?|(\d{1,2})\s*([ap])\.?m\.?|(noon|midnight)))?$/i;

/** A two-digit year as timelib reads it: 70-99 in the 1900s, 00-69 in the 2000s. */
function year(text: string): number {
  const n = Number(text);
  return text.length > 2 ? n : n < 70 ? 2000 + n : 1900 + n;
}

/** A month from its name or its first three letters (or more); 0 when it is none. */
function monthNamed(name: string): number {
  const lower = name.toLowerCase();
  return MONTH_NAMES.findIndex((m) => m === lower || (lower.length >= 3 && m.startsWith(lower))) +
    1;
}

/** An hour of a 12-hour clock (`a`/`p`) on the 24-hour one. */
const hour24 = (hour: number, half: string | undefined) =>
  half === undefined ? hour : (hour % 12) + (half.toLowerCase() === "p" ? 12 : 0);

/**
 * The fields of a text read without a format, as MongoDB's reading of free text does for the
 * common forms: an ISO 8601 date or one of {@link DATES}, maybe a weekday before it, maybe a
 * time (24-hour or am/pm, `noon`, `midnight`) and a zone after it.
 */
function readFree(text: string): Fields {
  const unreadable = () =>
    new Unreadable(`$dateFromString cannot read ${JSON.stringify(text)} as a date`);
  let rest = text.trim().replace(/^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+/i, "");
  let offset: number | undefined;
  const zone = TRAILING_ZONE.exec(rest);
  if (zone) {
    offset = zoneSeconds(zone[1], true);
    if (offset !== undefined) rest = rest.slice(0, zone.index).trimEnd();
  }
  for (const { re, read } of DATES) {
    const m = re.exec(rest);
    if (!m) continue;
    const [y, day, monthOrName] = read(m);
    const month = typeof monthOrName === "number" ? monthOrName : monthNamed(monthOrName);
    const t = TIME.exec(rest.slice(m[0].length));
    if (month === 0 || !t) throw unreadable();
    const fields: Fields = {
      year: y,
      month,
      day,
      hour: 0,
      minute: 0,
      second: 0,
      millisecond: 0,
      offset,
    };
    if (t[1] !== undefined) {
      fields.hour = hour24(Number(t[1]), t[5]);
      fields.minute = Number(t[2]);
      fields.second = Number(t[3] ?? 0);
      fields.millisecond = Number((t[4] ?? "0").slice(0, 3).padEnd(3, "0"));
    } else if (t[6] !== undefined) {
      fields.hour = hour24(Number(t[6]), t[7]);
    } else if (t[8] !== undefined) {
      fields.hour = t[8].toLowerCase() === "noon" ? 12 : 0;
    }
    return fields;
  }
  throw unreadable();
}

/** How each format specifier reads: a pattern at the text's current place, and the field. */
const READERS: Record<string, { re: RegExp; set: (f: Fields, text: string) => void }> = {
  Y: { re: /^\d{1,4}/, set: (f, t) => f.year = Number(t) },
  m: { re: /^\d{1,2}/, set: (f, t) => f.month = Number(t) },
  d: { re: /^\d{1,2}/, set: (f, t) => f.day = Number(t) },
  H: { re: /^\d{1,2}/, set: (f, t) => f.hour = Number(t) },
  M: { re: /^\d{2}/, set: (f, t) => f.minute = Number(t) },
  S: { re: /^\d{2}/, set: (f, t) => f.second = Number(t) },
  L: { re: /^\d{1,3}/, set: (f, t) => f.millisecond = Number(t.padEnd(3, "0")) },
  j: { re: /^\d{1,3}/, set: (f, t) => f.dayOfYear = Number(t) },
  G: { re: /^\d{1,4}/, set: (f, t) => f.isoYear = Number(t) },
  V: { re: /^\d{1,2}/, set: (f, t) => f.isoWeek = Number(t) },
  u: { re: /^[1-7]/, set: (f, t) => f.isoDay = Number(t) },
  w: { re: /^[1-7]/, set: () => {} },
  z: {
    re: /^\s*(?:(?:GMT|UTC|UT)?\s*[+-]\d{1,2}(?::?\d{2})?|[A-Za-z]{1,4})/i,
    set: (f, t) => {
      f.offset = zoneSeconds(t, true);
      if (f.offset === undefined) throw new Unreadable(`$dateFromString: unknown zone ${t.trim()}`);
    },
  },
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
  const iso = [fields.isoYear, fields.isoWeek, fields.isoDay].some((v) => v !== undefined);
  const natural = [fields.year, fields.month, fields.day, fields.dayOfYear].some((v) =>
    v !== undefined
  );
  if (iso && natural) {
    throw new Unreadable("$dateFromString: a format mixes ISO week-date parts with calendar ones");
  }
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
  const args = checkKeys(op, expr, ARGUMENTS, ["dateString"]);
  const evaluate = (key: string) => evalExpr(obj as never, args[key] as never, options);
  const text = evaluate("dateString");
  if (text === null || text === undefined) {
    return Object.hasOwn(args, "onNull") ? evaluate("onNull") : null;
  }
  const fail = (err: Unreadable) => {
    if (Object.hasOwn(args, "onError")) return evaluate("onError");
    throw err;
  };
  if (typeof text !== "string") return fail(new Unreadable(`${op} needs a string`));
  const format = Object.hasOwn(args, "format") ? evaluate("format") : undefined;
  const zone = Object.hasOwn(args, "timezone") ? evaluate("timezone") : undefined;
  if (Object.hasOwn(args, "format") && (format === null || format === undefined)) return null;
  if (Object.hasOwn(args, "timezone") && (zone === null || zone === undefined)) return null;
  if (format !== undefined && typeof format !== "string") {
    throw new Error(`${op}: the format must be a string`);
  }
  if (zone !== undefined && typeof zone !== "string") {
    throw new Error(`${op}: the timezone must be a string`);
  }
  if (format !== undefined) {
    checkFormat(op, format, (c) => c === "%" || Object.hasOwn(READERS, c));
  }
  try {
    if (text.length > MAX_TEXT) throw new Unreadable(`${op}: a date's text is not that long`);
    const fields = format === undefined ? readFree(text) : readFormatted(text, format);
    const local = localTime(fields);
    if (fields.offset !== undefined && zone !== undefined) {
      throw new Unreadable(`${op}: the text carries an offset and a timezone is given too`);
    }
    const ms = fields.offset !== undefined
      ? local - fields.offset * 1000
      : instantOf(local, zone ?? "UTC");
    return new Date(ms);
  } catch (err) {
    if (err instanceof Unreadable) return fail(err);
    throw err;
  }
}
