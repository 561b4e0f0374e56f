import assert from "node:assert/strict";
import { checkDateFormat, formatDate, parseDate, RFC1123 } from "../../src/validation/dates.ts";

const D = new Date(Date.UTC(2013, 3, 2, 22, 29, 13, 250));

Deno.test("formatDate: RFC 1123 default", () => {
  assert.equal(formatDate(D), "Tue, 02 Apr 2013 22:29:13 GMT");
  assert.equal(formatDate(D, RFC1123), D.toUTCString());
});

Deno.test("formatDate: every directive", () => {
  assert.equal(
    formatDate(D, "%a|%A|%d|%b|%B|%m|%y|%Y|%H|%I|%M|%S|%f|%p|%z|%Z|%j|%%"),
    "Tue|Tuesday|02|Apr|April|04|13|2013|22|10|29|13|250000|PM|+0000|UTC|092|%",
  );
  assert.equal(formatDate(new Date(Date.UTC(2020, 0, 1, 0, 5)), "%I %p"), "12 AM");
});

Deno.test("parseDate: round trips for several formats", () => {
  const formats = [
    RFC1123,
    "%Y-%m-%dT%H:%M:%S.%fZ",
    "%A %d %B %Y %I:%M:%S.%f %p",
    "%Y%j %H%M%S.%f",
    "%d/%m/%y %H:%M:%S.%f %z",
    "%Y-%m-%d %H:%M:%S.%f %Z 100%%",
  ];
  for (const fmt of formats) {
    const s = formatDate(D, fmt);
    const back = parseDate(s, fmt);
    assert.ok(back, `${fmt}: ${s}`);
    const expected = fmt.includes("%f") ? D.getTime() : D.getTime() - 250;
    assert.equal(back.getTime(), expected, `${fmt}: ${s}`);
  }
});

Deno.test("parseDate: time zone offsets, lenient digits and whitespace", () => {
  assert.equal(
    parseDate("2020-01-01 10:00 +0130", "%Y-%m-%d %H:%M %z")?.toISOString(),
    "2020-01-01T08:30:00.000Z",
  );
  assert.equal(
    parseDate("2020-01-01 10:00 -05:00", "%Y-%m-%d %H:%M %z")?.toISOString(),
    "2020-01-01T15:00:00.000Z",
  );
  assert.equal(parseDate("2020-1-5", "%Y-%m-%d")?.toISOString(), "2020-01-05T00:00:00.000Z");
  assert.equal(
    parseDate("Sun,  05   Jan 2020 00:00:00 GMT")?.toISOString(),
    "2020-01-05T00:00:00.000Z",
  );
  assert.equal(parseDate("05 january 2020", "%d %B %Y")?.toISOString(), "2020-01-05T00:00:00.000Z");
  assert.equal(parseDate("70", "%y")?.getUTCFullYear(), 1970);
  assert.equal(parseDate("12", "%y")?.getUTCFullYear(), 2012);
});

Deno.test("parseDate: refuses mismatches and impossible dates", () => {
  for (
    const [s, fmt] of [
      ["2020-02-30", "%Y-%m-%d"],
      ["2021-02-29", "%Y-%m-%d"],
      ["2020-13-01", "%Y-%m-%d"],
      ["2020-01-01 24:00", "%Y-%m-%d %H:%M"],
      ["2020-01-01x", "%Y-%m-%d"],
      ["20-01-01", "%Y-%m-%d"],
      ["Foo, 02 Apr 2013 22:29:13 GMT", RFC1123],
      ["Tue, 02 Apr 2013 22:29:13", RFC1123],
      ["x".repeat(1000), "%Y"],
    ]
  ) {
    assert.equal(parseDate(s, fmt), null, `${s} / ${fmt}`);
  }
  assert.ok(parseDate("2020-02-29", "%Y-%m-%d"));
});

Deno.test("checkDateFormat flags unsupported directives", () => {
  assert.equal(checkDateFormat(RFC1123), null);
  assert.equal(checkDateFormat("%Y-%m-%d %%"), null);
  assert.match(checkDateFormat("%Y %q") ?? "", /%q/);
  assert.match(checkDateFormat("%") ?? "", /directive/);
});
