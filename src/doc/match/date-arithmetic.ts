/**
 * `$dateAdd`, `$dateSubtract`, `$dateDiff`, `$dateTrunc`, `$dateToParts` and `$dateFromParts`
 * as MongoDB computes them, in the time zone given (dates.ts: a date's local time and back).
 *
 * mingo's ignored the time zone where it decides the answer (a day added across a change to
 * daylight saving time, a day truncated in New York), added a month to January 31st as March
 * 3rd (MongoDB: the last day of February), gave the calendar year for `isoWeekYear`, read ISO
 * week parts in `$dateFromParts` wrongly (year 9999), and answered null or missing arguments
 * and wrong types with a date, NaN or an error of its own; these give null for a null or
 * missing argument and refuse what MongoDB refuses.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * const month = { $dateAdd: { startDate: "$at", unit: "month", amount: 1 } };
 * new Aggregator([{ $project: { _id: 0, d: month } }], engineOptions())
 *   .run([{ at: new Date("2021-01-31T00:00:00Z") }]); // [{ d: 2021-02-28T00:00:00Z }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { dateOf, instantOf, isoWeek, partsOf } from "./dates.ts";
import { checkKeys } from "./arguments.ts";
import { numberValue } from "./numbers.ts";

const DAY_MS = 86_400_000;

/** Fixed lengths of the units shorter than a month. */
const UNIT_MS: Record<string, number> = {
  millisecond: 1,
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: DAY_MS,
  week: 7 * DAY_MS,
};

/** Months in the units measured in months. */
const UNIT_MONTHS: Record<string, number> = { month: 1, quarter: 3, year: 12 };

const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/** The largest date MongoDB's arithmetic reaches, either way (about 292 million years). */
const MAX_MS = 8.64e15;

/** The evaluated arguments of `op`, checked: a document with the keys `allowed` only. */
function argumentsOf(
  op: string,
  expr: unknown,
  allowed: { required: string[]; optional: string[] },
  evaluate: { obj: Doc; options: Options },
): Record<string, unknown> {
  const known = [...allowed.required, ...allowed.optional];
  const args = checkKeys(op, expr, known, allowed.required);
  const out: Record<string, unknown> = {};
  for (const key of known) {
    if (Object.hasOwn(args, key)) {
      out[key] = evalExpr(evaluate.obj as never, args[key] as never, evaluate.options);
    }
  }
  return out;
}

/** Whether a given argument is null or missing (the operator then gives null). */
const nullish = (args: Record<string, unknown>, keys: string[]) =>
  keys.some((key) => Object.hasOwn(args, key) && (args[key] === null || args[key] === undefined));

/** A time zone argument: a string (by default UTC). */
function zoneOf(op: string, zone: unknown): string {
  if (zone === undefined) return "UTC";
  if (typeof zone !== "string") throw new Error(`${op}: the timezone must be a string`);
  return zone;
}

/** A whole number of any numeric type, or an error naming the argument. */
function whole(op: string, name: string, value: unknown): number {
  const n = numberValue(value);
  if (n === undefined || !Number.isInteger(n)) {
    throw new Error(`${op}: '${name}' must be a whole number`);
  }
  return n;
}

/** A unit MongoDB knows. */
function unitOf(op: string, unit: unknown): string {
  if (
    typeof unit !== "string" || !(Object.hasOwn(UNIT_MS, unit) || Object.hasOwn(UNIT_MONTHS, unit))
  ) {
    throw new Error(`${op}: unknown unit ${JSON.stringify(unit)}`);
  }
  return unit;
}

/** The day a week starts on (0 for Sunday), from its name or its first three letters. */
function weekStart(op: string, value: unknown): number {
  if (value === undefined) return 0;
  const name = typeof value === "string" ? value.toLowerCase() : "";
  const day = DAYS.findIndex((d) => d === name || (name.length === 3 && d.startsWith(name)));
  if (day < 0) throw new Error(`${op}: unknown startOfWeek ${JSON.stringify(value)}`);
  return day;
}

/** A date checked to be within the range MongoDB's arithmetic gives. */
function inRange(op: string, ms: number): Date {
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_MS) {
    throw new Error(`${op}: the result is outside the range of dates`);
  }
  return new Date(ms);
}

/** The local time `local` (ms) moved by `months` calendar months, the day kept or clamped. */
function addMonths(local: number, months: number): number {
  const d = new Date(local);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const last = new Date(0);
  last.setUTCFullYear(year, month + 1, 0);
  const out = new Date(local);
  out.setUTCFullYear(year, month, Math.min(d.getUTCDate(), last.getUTCDate()));
  return out.getTime();
}

/**
 * `$dateAdd` or `$dateSubtract`: hours and shorter units are lengths of time; days and weeks
 * move the local date (its time of day kept across a change of offset); months, quarters and
 * years the local month, the day clamped to the month's last.
 */
function dateShift(op: "$dateAdd" | "$dateSubtract") {
  const sign = op === "$dateAdd" ? 1 : -1;
  return (obj: Doc, expr: unknown, options: Options): unknown => {
    const args = argumentsOf(op, expr, {
      required: ["startDate", "unit", "amount"],
      optional: ["timezone"],
    }, { obj, options });
    if (nullish(args, ["startDate", "unit", "amount", "timezone"])) return null;
    const start = dateOf(args.startDate, op);
    const unit = unitOf(op, args.unit);
    const amount = sign * whole(op, "amount", args.amount);
    const zone = zoneOf(op, args.timezone);
    if (unit !== "day" && unit !== "week" && Object.hasOwn(UNIT_MS, unit)) {
      return inRange(op, start.getTime() + amount * UNIT_MS[unit]);
    }
    const { date: local } = partsOf(start, zone);
    const moved = Object.hasOwn(UNIT_MS, unit)
      ? local.getTime() + amount * UNIT_MS[unit]
      : addMonths(local.getTime(), amount * UNIT_MONTHS[unit]);
    return inRange(op, instantOf(inRange(op, moved).getTime(), zone));
  };
}

/** The number of `unit` boundaries (in local time) from the local time `a` to `b`. */
function boundaries(a: Date, b: Date, unit: string, startOfWeek: number): number {
  if (Object.hasOwn(UNIT_MONTHS, unit)) {
    const months = (d: Date) => d.getUTCFullYear() * 12 + d.getUTCMonth();
    const size = UNIT_MONTHS[unit];
    return Math.floor(months(b) / size) - Math.floor(months(a) / size);
  }
  if (unit === "week") {
    // Day 0 (1970-01-01) was a Thursday.
    const weekOf = (d: Date) =>
      Math.floor((Math.floor(d.getTime() / DAY_MS) + 4 - startOfWeek) / 7);
    return weekOf(b) - weekOf(a);
  }
  const size = UNIT_MS[unit];
  return Math.floor(b.getTime() / size) - Math.floor(a.getTime() / size);
}

/** `$dateDiff`: the `unit` boundaries crossed from `startDate` to `endDate`, in local time. */
function $dateDiff(obj: Doc, expr: unknown, options: Options): unknown {
  const op = "$dateDiff";
  const args = argumentsOf(op, expr, {
    required: ["startDate", "endDate", "unit"],
    optional: ["timezone", "startOfWeek"],
  }, { obj, options });
  if (nullish(args, ["startDate", "endDate", "unit", "timezone", "startOfWeek"])) return null;
  const unit = unitOf(op, args.unit);
  const zone = zoneOf(op, args.timezone);
  const startOfWeek = unit === "week" ? weekStart(op, args.startOfWeek) : 0;
  const a = partsOf(dateOf(args.startDate, op), zone).date;
  const b = partsOf(dateOf(args.endDate, op), zone).date;
  return boundaries(a, b, unit, startOfWeek);
}

/** 2000-01-01T00:00:00 local: where `$dateTrunc` starts counting bins. */
const REFERENCE = Date.UTC(2000, 0, 1);

/**
 * `$dateTrunc`: the start of the bin of `binSize` units (counted from 2000-01-01, weeks from
 * the first `startOfWeek` day on or after it) holding the date, in local time.
 */
function $dateTrunc(obj: Doc, expr: unknown, options: Options): unknown {
  const op = "$dateTrunc";
  const args = argumentsOf(op, expr, {
    required: ["date", "unit"],
    optional: ["binSize", "timezone", "startOfWeek"],
  }, { obj, options });
  if (nullish(args, ["date", "unit", "binSize", "timezone", "startOfWeek"])) return null;
  const unit = unitOf(op, args.unit);
  const binSize = args.binSize === undefined ? 1 : whole(op, "binSize", args.binSize);
  if (binSize <= 0) throw new Error(`${op}: 'binSize' must be greater than 0`);
  const zone = zoneOf(op, args.timezone);
  const local = partsOf(dateOf(args.date, op), zone).date.getTime();
  let start: number;
  if (Object.hasOwn(UNIT_MONTHS, unit)) {
    const d = new Date(local);
    const months = (d.getUTCFullYear() - 2000) * 12 + d.getUTCMonth();
    const size = binSize * UNIT_MONTHS[unit];
    const bin = Math.floor(months / size) * size;
    const year = 2000 + Math.floor(bin / 12);
    const out = new Date(0);
    out.setUTCFullYear(year, bin - (year - 2000) * 12, 1);
    start = out.getTime();
  } else {
    let reference = REFERENCE;
    if (unit === "week") {
      const startOfWeek = weekStart(op, args.startOfWeek);
      reference += ((startOfWeek - new Date(REFERENCE).getUTCDay() + 7) % 7) * DAY_MS;
    }
    const size = binSize * UNIT_MS[unit];
    start = reference + Math.floor((local - reference) / size) * size;
  }
  return inRange(op, instantOf(start, zone));
}

/** `$dateToParts`: the date's local parts, or its ISO week-date parts with `iso8601`. */
function $dateToParts(obj: Doc, expr: unknown, options: Options): unknown {
  const op = "$dateToParts";
  const args = argumentsOf(op, expr, { required: ["date"], optional: ["timezone", "iso8601"] }, {
    obj,
    options,
  });
  if (nullish(args, ["date", "timezone", "iso8601"])) return null;
  if (args.iso8601 !== undefined && typeof args.iso8601 !== "boolean") {
    throw new Error(`${op}: 'iso8601' must be a boolean`);
  }
  const d = partsOf(dateOf(args.date, op), zoneOf(op, args.timezone)).date;
  const time = {
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    millisecond: d.getUTCMilliseconds(),
  };
  if (args.iso8601) {
    const { week, year } = isoWeek(d);
    return { isoWeekYear: year, isoWeek: week, isoDayOfWeek: d.getUTCDay() || 7, ...time };
  }
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), ...time };
}

const TIME_PARTS = ["hour", "minute", "second", "millisecond"];
const CALENDAR_PARTS = ["year", "month", "day", ...TIME_PARTS];
const ISO_PARTS = ["isoWeekYear", "isoWeek", "isoDayOfWeek", ...TIME_PARTS];

/**
 * `$dateFromParts`: the date of calendar parts (`year` ...) or ISO week-date parts
 * (`isoWeekYear` ...), in the time zone given; a part past its range carries into the next
 * (month 14 is February of the next year), as in MongoDB.
 */
function $dateFromParts(obj: Doc, expr: unknown, options: Options): unknown {
  const op = "$dateFromParts";
  if (!isPlainObject(expr)) throw new Error(`${op} takes a document of arguments`);
  const iso = Object.hasOwn(expr, "isoWeekYear");
  if (iso && Object.hasOwn(expr, "year")) {
    throw new Error(`${op} takes either 'year' or 'isoWeekYear', not both`);
  }
  if (iso && ["month", "day"].some((k) => Object.hasOwn(expr, k))) {
    throw new Error(`${op}: 'month' and 'day' do not go with 'isoWeekYear'`);
  }
  if (!iso && ["isoWeek", "isoDayOfWeek"].some((k) => Object.hasOwn(expr, k))) {
    throw new Error(`${op}: 'isoWeek' and 'isoDayOfWeek' go with 'isoWeekYear' only`);
  }
  const names = iso ? ISO_PARTS : CALENDAR_PARTS;
  const args = argumentsOf(op, expr, {
    required: [iso ? "isoWeekYear" : "year"],
    optional: [...names.slice(1), "timezone"],
  }, { obj, options });
  if (nullish(args, [...names, "timezone"])) return null;
  const part = (name: string, fallback: number, min: number, max: number) => {
    if (args[name] === undefined) return fallback;
    const n = whole(op, name, args[name]);
    if (n < min || n > max) throw new Error(`${op}: '${name}' must be within ${min} and ${max}`);
    return n;
  };
  const [first, a, b] = iso ? ["isoWeekYear", "isoWeek", "isoDayOfWeek"] : ["year", "month", "day"];
  const year = part(first, 1970, 1, 9999);
  const second = part(a, 1, -32768, 32767);
  const third = part(b, 1, -32768, 32767);
  // Seconds and milliseconds are 64-bit there (a count of milliseconds since 1970 is one).
  const [hour, minute] = ["hour", "minute"].map((name) => part(name, 0, -32768, 32767));
  const [sec, ms] = ["second", "millisecond"].map((name) => part(name, 0, -MAX_MS, MAX_MS));
  const local = new Date(0);
  if (iso) {
    // Monday of ISO week 1: the week holding January 4th.
    local.setUTCFullYear(year, 0, 4);
    const monday = local.getUTCDate() - ((local.getUTCDay() || 7) - 1);
    local.setUTCFullYear(year, 0, monday + (second - 1) * 7 + (third - 1));
  } else {
    local.setUTCFullYear(year, second - 1, third);
  }
  local.setUTCHours(hour, minute, sec, ms);
  return inRange(op, instantOf(local.getTime(), zoneOf(op, args.timezone)));
}

/** The operators of this module, by name. */
export const dateArithmetic = {
  $dateAdd: dateShift("$dateAdd"),
  $dateSubtract: dateShift("$dateSubtract"),
  $dateDiff,
  $dateTrunc,
  $dateToParts,
  $dateFromParts,
};
