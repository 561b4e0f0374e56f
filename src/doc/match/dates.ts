/**
 * `$dateToString` and the operators giving one part of a date (`$year` ... `$isoWeekYear`) as
 * MongoDB computes them, and a date's local time in a time zone and back.
 *
 * mingo's part operators read Olson time zones to the minute and only `Area/City` names
 * (`UTC` and `Etc/GMT-2` failed), refused a null or missing date (MongoDB: null), an ObjectId
 * and the one-element list form (`{$year: ["$at"]}`); its `$week` counted weeks from the ISO
 * week (60% of dates one week off) and its `$isoWeekYear` gave the calendar year around New
 * Year (2021-01-03 is in 2020's week 53). Its `$dateToString` numbered the days of the week
 * (`%w`) from 0 where MongoDB numbers them from 1 (Sunday), gave the calendar year for the ISO
 * week-numbering year (`%G`), counted weeks (`%U`) from the ISO week, dropped `%%`, left an
 * unknown specifier (`%x`) or a lone `%` in the text where MongoDB refuses the format, and
 * wrote a negative offset of a half hour as `-0630` for `-0530` (`%z`). A historical offset
 * such as New York's `-04:56:02` before 1883 is read to the second here.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator(
 *   [{ $project: { _id: 0, d: { $dateToString: { date: "$at", format: "%G-W%V-%u %w %U" } } } }],
 *   engineOptions(),
 * ).run([{ at: new Date("2021-01-03T00:00:00Z") }]); // [{ d: "2020-W53-7 1 01" }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { bsonType } from "./numbers.ts";
import { checkKeys } from "./arguments.ts";

/** The format when none is given. */
const DEFAULT_FORMAT = "%Y-%m-%dT%H:%M:%S.%LZ";

const ARGUMENTS = ["date", "format", "timezone", "onNull"];

/** What each specifier writes, from the date's parts in its time zone (see {@link Parts}). */
const SPECIFIERS: Record<string, (p: Parts) => string> = {
  "%": () => "%",
  Y: (p) => padded(p.date.getUTCFullYear(), 4),
  m: (p) => padded(p.date.getUTCMonth() + 1, 2),
  d: (p) => padded(p.date.getUTCDate(), 2),
  H: (p) => padded(p.date.getUTCHours(), 2),
  M: (p) => padded(p.date.getUTCMinutes(), 2),
  S: (p) => padded(p.date.getUTCSeconds(), 2),
  L: (p) => padded(p.date.getUTCMilliseconds(), 3),
  j: (p) => padded(dayOfYear(p.date), 3),
  w: (p) => padded(p.date.getUTCDay() + 1, 1),
  U: (p) => padded(week(p.date), 2),
  G: (p) => padded(isoWeek(p.date).year, 4),
  V: (p) => padded(isoWeek(p.date).week, 2),
  u: (p) => padded(p.date.getUTCDay() || 7, 1),
  z: (p) => {
    const minutes = Math.trunc(Math.abs(p.offset) / 60);
    return `${p.offset < 0 ? "-" : "+"}${padded(Math.trunc(minutes / 60), 2)}${
      padded(minutes % 60, 2)
    }`;
  },
  Z: (p) => String(Math.trunc(p.offset / 60)),
  b: (p) => MONTHS[p.date.getUTCMonth()].slice(0, 3),
  B: (p) => MONTHS[p.date.getUTCMonth()],
};

/** The months' names. */
export const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** A date shifted by its zone's offset (read with the UTC getters), and the offset in seconds. */
export interface Parts {
  date: Date;
  offset: number;
}

/** `n` with leading zeros to `width` digits; MongoDB refuses a part outside 0-9999. */
function padded(n: number, width: number): string {
  if (n < 0 || n > 9999) {
    throw new Error(
      `$dateToString could not convert the date: a part (${n}) is outside the range 0-9999`,
    );
  }
  return String(n).padStart(width, "0");
}

const DAY_MS = 86_400_000;

/** The start of the day of a date read with the UTC getters (any year, 0-99 included). */
const dayStart = (date: Date) => Math.floor(date.getTime() / DAY_MS) * DAY_MS;

/** The day of the year of a date read with the UTC getters, 1 to 366. */
export function dayOfYear(date: Date): number {
  const start = new Date(0);
  start.setUTCFullYear(date.getUTCFullYear(), 0, 1);
  return (dayStart(date) - start.getTime()) / DAY_MS + 1;
}

/** The week of the year (0-53): weeks start on Sunday; days before the first Sunday are week 0. */
export function week(date: Date): number {
  return Math.floor((dayOfYear(date) - 1 + 7 - date.getUTCDay()) / 7);
}

/** The ISO 8601 week (1-53) and its year: weeks start on Monday; week 1 holds a Thursday. */
export function isoWeek(date: Date): { week: number; year: number } {
  // The Thursday of the date's week decides the year; week 1 is the one holding January 4th.
  const thursday = new Date(dayStart(date) + (4 - (date.getUTCDay() || 7)) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((dayOfYear(thursday) - 1) / 7) + 1;
  return { week, year };
}

/** Checks a format of `op` as MongoDB does: every `%` followed by a specifier it `knows`. */
export function checkFormat(op: string, format: string, knows: (c: string) => boolean): void {
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== "%") continue;
    if (i === format.length - 1) throw new Error(`${op}: unmatched '%' at the end of the format`);
    const specifier = format[++i];
    if (!knows(specifier)) {
      throw new Error(`${op}: invalid format character '%${specifier}' in the format`);
    }
  }
}

/** The date a value stands for: a date, an ObjectId's creation time, a Timestamp's seconds. */
export function dateOf(value: unknown, op: string): Date {
  if (value instanceof Date) return value;
  const type = bsonType(value);
  if (type === "ObjectId") return (value as { getTimestamp(): Date }).getTimestamp();
  if (type === "Timestamp") {
    return new Date((value as { getHighBits(): number }).getHighBits() * 1000);
  }
  throw new Error(`${op} needs a date, a Timestamp or an ObjectId`);
}

/** A UTC offset as MongoDB reads one: `+HH`, `+HHMM` or `+HH:MM` (or `-`); in seconds. */
const OFFSET = /^([+-])(\d{2})(?::?(\d{2}))?$/;

/**
 * The UTC offset, in seconds, of time zone `zone` (an Olson name, `UTC`, or an offset such
 * as `+05:30`) at `date`; throws for a zone it does not know.
 */
export function zoneOffsetSeconds(date: Date, zone: string): number {
  const offset = OFFSET.exec(zone);
  if (offset) {
    const seconds = Number(offset[2]) * 3600 + Number(offset[3] ?? 0) * 60;
    return offset[1] === "-" ? -seconds : seconds;
  }
  const parts = formatterOf(zone).formatToParts(date);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const bc = parts.find((p) => p.type === "era")?.value === "BC";
  const local = new Date(0);
  local.setUTCFullYear(bc ? 1 - part("year") : part("year"), part("month") - 1, part("day"));
  local.setUTCHours(part("hour"), part("minute"), part("second"));
  return Math.round((local.getTime() - Math.floor(date.getTime() / 1000) * 1000) / 1000);
}

/** Formatters by time zone name (making one costs far more than using it). */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 64;

/** The formatter giving a date's local parts in time zone `zone`; throws for an unknown one. */
function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = FORMATTERS.get(zone);
  if (formatter !== undefined) return formatter;
  try {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    throw new Error(`unrecognized time zone identifier: ${zone}`);
  }
  if (FORMATTERS.size >= MAX_FORMATTERS) FORMATTERS.clear();
  FORMATTERS.set(zone, formatter);
  return formatter;
}

/**
 * The instant whose local time in `zone` is `local` (milliseconds of a clock that reads
 * local time as UTC). A local time a daylight-saving change skips or repeats gets one of
 * the offsets around it.
 */
export function instantOf(local: number, zone: string): number {
  if (zone === "UTC") return local;
  const first = zoneOffsetSeconds(new Date(local), zone);
  const instant = local - first * 1000;
  const second = zoneOffsetSeconds(new Date(instant), zone);
  return second === first ? instant : local - second * 1000;
}

/** A date's {@link Parts} in time zone `zone`: its local time, read with the UTC getters. */
export function partsOf(at: Date, zone: string): Parts {
  const offset = zone === "UTC" ? 0 : zoneOffsetSeconds(at, zone);
  return { date: new Date(at.getTime() + offset * 1000), offset };
}

/**
 * `$dateToString: {date, format, timezone, onNull}`: null when the time zone or the format
 * is null, `onNull` (else null) when the date is null or missing.
 */
export function $dateToString(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$dateToString", expr, ARGUMENTS, ["date"]);
  const evaluate = (key: string) => evalExpr(obj as never, args[key] as never, options);
  const format = Object.hasOwn(args, "format") ? evaluate("format") : DEFAULT_FORMAT;
  const date = evaluate("date");
  const zone = Object.hasOwn(args, "timezone") ? evaluate("timezone") : "UTC";
  if (zone === null || zone === undefined) return null;
  if (typeof zone !== "string") throw new Error("$dateToString: the timezone must be a string");
  if (format === null || format === undefined) return null;
  if (typeof format !== "string") throw new Error("$dateToString: the format must be a string");
  checkFormat("$dateToString", format, (c) => Object.hasOwn(SPECIFIERS, c));
  if (date === null || date === undefined) {
    return Object.hasOwn(args, "onNull") ? evaluate("onNull") : null;
  }
  const parts = partsOf(dateOf(date, "$dateToString"), zone);
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    out += c === "%" ? SPECIFIERS[format[++i]](parts) : c;
  }
  return out;
}

/**
 * A date operator giving one number of a date: `{op: date}`, `{op: [date]}` or
 * `{op: {date, timezone}}`; null for a null or missing date or time zone.
 */
function datePart(op: string, part: (date: Date) => number) {
  return (obj: Doc, expr: unknown, options: Options): unknown => {
    let date = expr;
    let zone: unknown = "UTC";
    if (Array.isArray(date)) {
      if (date.length !== 1) throw new Error(`${op} takes one argument`);
      date = date[0];
    }
    if (isPlainObject(date) && Object.hasOwn(date, "date")) {
      checkKeys(op, date, ["date", "timezone"], ["date"]);
      if (Object.hasOwn(date, "timezone")) {
        zone = evalExpr(obj as never, date.timezone as never, options);
      }
      date = date.date;
    }
    const value = evalExpr(obj as never, date as never, options);
    if (zone === null || zone === undefined || value === null || value === undefined) return null;
    if (typeof zone !== "string") throw new Error(`${op}: the timezone must be a string`);
    return part(partsOf(dateOf(value, op), zone).date);
  };
}

/**
 * The date operators giving one number of a date, in its time zone: `$year` ... `$millisecond`,
 * `$dayOfYear`, `$dayOfWeek` (1 for Sunday), `$isoDayOfWeek` (1 for Monday), `$week`,
 * `$isoWeek` and `$isoWeekYear`.
 */
export const datePartExpressions = {
  $year: datePart("$year", (d) => d.getUTCFullYear()),
  $month: datePart("$month", (d) => d.getUTCMonth() + 1),
  $dayOfMonth: datePart("$dayOfMonth", (d) => d.getUTCDate()),
  $hour: datePart("$hour", (d) => d.getUTCHours()),
  $minute: datePart("$minute", (d) => d.getUTCMinutes()),
  $second: datePart("$second", (d) => d.getUTCSeconds()),
  $millisecond: datePart("$millisecond", (d) => d.getUTCMilliseconds()),
  $dayOfYear: datePart("$dayOfYear", dayOfYear),
  $dayOfWeek: datePart("$dayOfWeek", (d) => d.getUTCDay() + 1),
  $isoDayOfWeek: datePart("$isoDayOfWeek", (d) => d.getUTCDay() || 7),
  $week: datePart("$week", week),
  $isoWeek: datePart("$isoWeek", (d) => isoWeek(d).week),
  $isoWeekYear: datePart("$isoWeekYear", (d) => isoWeek(d).year),
};
