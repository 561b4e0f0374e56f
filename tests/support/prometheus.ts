/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: it
 * throws on any line the format does not allow, and checks that every sample belongs to a
 * family declared by `# TYPE` and that histogram buckets are cumulative and end in `+Inf`.
 */

/** One sample line. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition: families by name (with their type) and every sample. */
export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL},?)*)\\})? (\\S+)(?: (-?\\d+))?$`);
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(text: string, line: string): number {
  if (/^[+-]?inf$/i.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) throw new Error(`bad value: ${line}`);
  return Number(text);
}

/** The family a sample name belongs to (histogram and summary suffixes removed). */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m && types.has(m[1]) ? m[1] : undefined;
}

/** Parses `text`; throws naming the first line that breaks the format. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a line feed");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = new RegExp(`^# (HELP|TYPE) (${NAME})(?: (.*))?$`).exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)/.test(line)) throw new Error(`bad comment: ${line}`);
        continue;
      }
      if (m[1] === "TYPE") {
        if (!TYPES.has(m[3] ?? "")) throw new Error(`bad type: ${line}`);
        if (types.has(m[2])) throw new Error(`family typed twice: ${line}`);
        types.set(m[2], m[3]);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(new RegExp(LABEL, "g"))) {
      if (Object.hasOwn(labels, l[1])) throw new Error(`label given twice: ${line}`);
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => c === "n" ? "\n" : c);
    }
    const name = m[1];
    if (!familyOf(name, types)) throw new Error(`sample before its # TYPE: ${line}`);
    samples.push({ name, labels, value: parseValue(m[m.length - 2], line) });
  }
  checkHistograms(types, samples);
  return { types, samples };
}

/** Buckets of each histogram series are cumulative and the `+Inf` one equals `_count`. */
function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [family, type] of types) {
    if (type !== "histogram") continue;
    const series = new Map<string, { buckets: [number, number][]; count?: number }>();
    const keyOf = (labels: Record<string, string>) =>
      JSON.stringify(Object.entries(labels).filter(([k]) => k !== "le").sort());
    for (const s of samples) {
      if (s.name !== `${family}_bucket` && s.name !== `${family}_count`) continue;
      const key = keyOf(s.labels);
      const entry = series.get(key) ?? { buckets: [] };
      series.set(key, entry);
      if (s.name.endsWith("_count")) entry.count = s.value;
      else entry.buckets.push([parseValue(s.labels.le, s.labels.le), s.value]);
    }
    for (const [key, { buckets, count }] of series) {
      const last = buckets.at(-1);
      if (!last || last[0] !== Infinity || last[1] !== count) {
        throw new Error(`${family}${key}: the +Inf bucket must equal _count`);
      }
      for (let i = 1; i < buckets.length; i++) {
        if (buckets[i][0] <= buckets[i - 1][0] || buckets[i][1] < buckets[i - 1][1]) {
          throw new Error(`${family}${key}: buckets must be ordered and cumulative`);
        }
      }
    }
  }
}

/** The value of the one sample `name` whose labels include `labels`; 0 when none. */
export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = exposition.samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: several samples`);
  return found[0]?.value ?? 0;
}
