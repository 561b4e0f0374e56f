/**
 * strftime-style date formatting and parsing, always in UTC.
 *
 * Supported directives: `%a %A %d %b %B %m %y %Y %H %I %M %S %f %p %z %Z %j %%`.
 * A space in the format matches one or more whitespace characters when parsing (as
 * Python's `strptime` does). Any other character must match literally.
 */

import { MONTHS } from "../doc/match/dates.ts";

/** The service's default DATE_FORMAT (RFC 1123). */
export const RFC1123 = "%a, %d %b %Y %H:%M:%S GMT";

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DIRECTIVES = new Set("aAdbBmyYHIMSfpzZj%");
/** Longest input parseDate looks at; longer strings are not dates. */
const MAX_INPUT = 256;

type Token = { lit: string } | { dir: string };

const tokenCache = new Map<string, Token[]>();

function tokenize(fmt: string): Token[] {
  const cached = tokenCache.get(fmt);
  if (cached) return cached;
  const tokens: Token[] = [];
  let lit = "";
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i];
    if (c === "%" && i + 1 < fmt.length && DIRECTIVES.has(fmt[i + 1])) {
      if (lit) tokens.push({ lit });
      lit = "";
      tokens.push({ dir: fmt[++i] });
    } else {
      lit += c;
    }
  }
  if (lit) tokens.push({ lit });
  if (tokenCache.size < 64) tokenCache.set(fmt, tokens);
  return tokens;
}

/** Returns a problem description when `fmt` has an unsupported `%` directive, else null. */
export function checkDateFormat(fmt: string): string | null {
  for (let i = 0; i < fmt.length; i++) {
    if (fmt[i] !== "%") continue;
    const d = fmt[i + 1];
    if (d === undefined || !DIRECTIVES.has(d)) {
      return `unsupported date directive '%${d ?? ""}'`;
    }
    i++;
  }
  return null;
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Formats `d` in UTC following the strftime-style `fmt`. */
export function formatDate(d: Date, fmt: string = RFC1123): string {
  let out = "";
  for (const t of tokenize(fmt)) {
    if ("lit" in t) {
      out += t.lit;
      continue;
    }
    const h = d.getUTCHours();
    switch (t.dir) {
      case "a":
        out += DAYS[d.getUTCDay()].slice(0, 3);
        break;
      case "A":
        out += DAYS[d.getUTCDay()];
        break;
      case "d":
        out += pad(d.getUTCDate());
        break;
      case "b":
        out += MONTHS[d.getUTCMonth()].slice(0, 3);
        break;
      case "B":
        out += MONTHS[d.getUTCMonth()];
        break;
      case "m":
        out += pad(d.getUTCMonth() + 1);
        break;
      case "y":
        out += pad(d.getUTCFullYear() % 100);
        break;
      case "Y":
        out += pad(d.getUTCFullYear(), 4);
        break;
      case "H":
        out += pad(h);
        break;
      case "I":
        out += pad(h % 12 === 0 ? 12 : h % 12);
        break;
      case "M":
        out += pad(d.getUTCMinutes());
        break;
      case "S":
        out += pad(d.getUTCSeconds());
        break;
      case "f":
        out += pad(d.getUTCMilliseconds() * 1000, 6);
        break;
      case "p":
        out += h < 12 ? "AM" : "PM";
        break;
      case "z":
        out += "+0000";
        break;
      case "Z":
        out += "UTC";
        break;
      case "j": {
        const start = Date.UTC(d.getUTCFullYear(), 0, 1);
        out += pad(Math.floor((d.getTime() - start) / 86400000) + 1, 3);
        break;
      }
      case "%":
        out += "%";
        break;
    }
  }
  return out;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  micro: number;
  pm?: boolean;
  hour12: boolean;
  yday?: number;
  offsetMin: number;
}

/** Matches a name (full or 3-letter) from `names` at `pos`, returning [index, length]. */
function matchName(s: string, pos: number, names: string[]): [number, number] | null {
  const rest = s.slice(pos, pos + 10).toLowerCase();
  for (let i = 0; i < names.length; i++) {
    const full = names[i].toLowerCase();
    if (rest.startsWith(full)) return [i, full.length];
  }
  for (let i = 0; i < names.length; i++) {
    if (rest.startsWith(names[i].slice(0, 3).toLowerCase())) return [i, 3];
  }
  return null;
}

/** How many digits a number takes: `min` to `max`. */
interface DigitCount {
  min: number;
  max: number;
}

/** A number directive: its digit count, and the range `lo` to `hi` of its value. */
interface NumberField extends DigitCount {
  lo: number;
  hi: number;
}

/** The digits `%f` (microseconds) reads. */
const MICRO_DIGITS: DigitCount = { min: 1, max: 6 };

/** Reads `min` to `max` decimal digits at `pos`: [value, length], or null when fewer. */
function readDigits(s: string, pos: number, { min, max }: DigitCount): [number, number] | null {
  let end = pos;
  while (end < s.length && end - pos < max && s.charCodeAt(end) >= 48 && s.charCodeAt(end) <= 57) {
    end++;
  }
  if (end - pos < min) return null;
  return [Number(s.slice(pos, end)), end - pos];
}

/** One parse: the input `s`, and the parts `p` read from it so far. */
interface Scan {
  s: string;
  p: Parts;
}

/**
 * Reads directive `dir` at `pos` of the input into the parts; returns the new position or
 * -1 on mismatch.
 */
function readDirective(dir: string, pos: number, { s, p }: Scan): number {
  // A number directive: its digits at `pos`, in its range, handed to `set`.
  const num = (field: NumberField, set: (n: number) => void) => {
    const r = readDigits(s, pos, field);
    if (!r || r[0] < field.lo || r[0] > field.hi) return -1;
    set(r[0]);
    return pos + r[1];
  };
  switch (dir) {
    case "a":
    case "A": {
      const r = matchName(s, pos, DAYS);
      return r ? pos + r[1] : -1;
    }
    case "b":
    case "B": {
      const r = matchName(s, pos, MONTHS);
      if (!r) return -1;
      p.month = r[0] + 1;
      return pos + r[1];
    }
    case "d":
      return num({ min: 1, max: 2, lo: 1, hi: 31 }, (n) => p.day = n);
    case "m":
      return num({ min: 1, max: 2, lo: 1, hi: 12 }, (n) => p.month = n);
    case "y":
      return num({ min: 2, max: 2, lo: 0, hi: 99 }, (n) => p.year = n < 69 ? 2000 + n : 1900 + n);
    case "Y":
      return num({ min: 4, max: 4, lo: 0, hi: 9999 }, (n) => p.year = n);
    case "H":
      return num({ min: 1, max: 2, lo: 0, hi: 23 }, (n) => p.hour = n);
    case "I":
      p.hour12 = true;
      return num({ min: 1, max: 2, lo: 1, hi: 12 }, (n) => p.hour = n);
    case "M":
      return num({ min: 1, max: 2, lo: 0, hi: 59 }, (n) => p.minute = n);
    case "S":
      return num({ min: 1, max: 2, lo: 0, hi: 59 }, (n) => p.second = n);
    case "f": {
      const r = readDigits(s, pos, MICRO_DIGITS);
      if (!r) return -1;
      p.micro = Number(s.slice(pos, pos + r[1]).padEnd(6, "0"));
      return pos + r[1];
    }
    case "p": {
      const v = s.slice(pos, pos + 2).toUpperCase();
      if (v !== "AM" && v !== "PM") return -1;
      p.pm = v === "PM";
      return pos + 2;
    }
    case "z": {
      if (s[pos] === "Z") return pos + 1;
      const m = /^([+-])(\d\d):?(\d\d)/.exec(s.slice(pos, pos + 6));
      if (!m) return -1;
      p.offsetMin = (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
      return pos + m[0].length;
    }
    case "Z": {
      const m = /^(UTC|GMT|Z)/i.exec(s.slice(pos, pos + 3));
      return m ? pos + m[0].length : -1;
    }
    case "j":
      return num({ min: 1, max: 3, lo: 1, hi: 366 }, (n) => p.yday = n);
    case "%":
      return s[pos] === "%" ? pos + 1 : -1;
  }
  return -1;
}

/**
 * Parses `s` with the strftime-style `fmt` (UTC unless `%z` gives an offset).
 * Returns null when `s` does not match or names an impossible date (e.g. 31 Feb).
 */
export function parseDate(s: string, fmt: string = RFC1123): Date | null {
  if (typeof s !== "string" || s.length > MAX_INPUT) return null;
  const p: Parts = {
    year: 1900,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 0,
    micro: 0,
    hour12: false,
    offsetMin: 0,
  };
  const scan: Scan = { s, p };
  let pos = 0;
  for (const t of tokenize(fmt)) {
    if ("dir" in t) {
      pos = readDirective(t.dir, pos, scan);
      if (pos < 0) return null;
      continue;
    }
    for (const c of t.lit) {
      if (c === " ") {
        if (!/\s/.test(s[pos] ?? "")) return null;
        while (/\s/.test(s[pos] ?? "")) pos++;
      } else if (s[pos++] !== c) {
        return null;
      }
    }
  }
  if (pos !== s.length) return null;
  let hour = p.hour;
  if (p.hour12) hour = (hour % 12) + (p.pm ? 12 : 0);
  else if (p.pm !== undefined && hour <= 12) hour = (hour % 12) + (p.pm ? 12 : 0);
  let ms: number;
  if (p.yday !== undefined) {
    ms = Date.UTC(p.year, 0, p.yday, hour, p.minute, p.second, Math.floor(p.micro / 1000));
    if (new Date(ms).getUTCFullYear() !== p.year) return null;
  } else {
    ms = Date.UTC(p.year, p.month - 1, p.day, hour, p.minute, p.second, Math.floor(p.micro / 1000));
    const d = new Date(ms);
    if (d.getUTCDate() !== p.day || d.getUTCMonth() !== p.month - 1) return null;
  }
  // Date.UTC maps years 0-99 to 1900-1999; fix the year explicitly.
  const d = new Date(ms);
  if (p.year < 100) d.setUTCFullYear(p.year);
  return new Date(d.getTime() - p.offsetMin * 60000);
}
