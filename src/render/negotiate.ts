/**
 * Content negotiation between the enabled renderers (`json`, `xml`) from `Accept`.
 */

/** Renderer names. */
export type RendererName = "json" | "xml";

const MEDIA_TYPES: Record<string, RendererName> = {
  "application/json": "json",
  "application/xml": "xml",
  "text/xml": "xml",
  "application/x-xml": "xml",
};
const MAX_ACCEPT_LENGTH = 4096;
const MAX_ENTRIES = 64;

/**
 * Picks the renderer for a request: the acceptable enabled one with the highest q-value,
 * JSON winning ties; with no `Accept`, wildcards or nothing acceptable, JSON if enabled,
 * else the first enabled renderer (Eve falls back rather than answering 406).
 * Returns null only when no known renderer is enabled.
 */
export function negotiate(accept: string | null, enabled: string[]): RendererName | null {
  let known = NEGOTIATED.get(enabled);
  if (known === undefined) {
    const on = enabled.map((e) => e.toLowerCase());
    known = { usable: RENDERERS.filter((r) => on.includes(r)), byAccept: new Map() };
    NEGOTIATED.set(enabled, known);
  }
  const { usable, byAccept } = known;
  if (usable.length === 0) return null;
  if (!accept) return usable[0];
  const answer = byAccept.get(accept);
  if (answer !== undefined) return answer;
  const best = negotiated(accept, usable);
  if (accept.length <= MAX_KEPT_LENGTH) {
    if (byAccept.size >= MAX_KEPT) byAccept.clear();
    byAccept.set(accept, best);
  }
  return best;
}

const RENDERERS = ["json", "xml"] as const;

/** Answers kept per list of enabled renderers, and the longest `Accept` kept. */
const MAX_KEPT = 64;
const MAX_KEPT_LENGTH = 512;

/**
 * Each list of enabled renderers' usable ones (in order of preference) and its answers to
 * recent `Accept` values (a request's answer is worked out once, though both the read and
 * the rendering ask).
 */
const NEGOTIATED = new WeakMap<
  string[],
  { usable: RendererName[]; byAccept: Map<string, RendererName> }
>();

/** {@link negotiate} of a present `accept` between `usable` renderers (at least one). */
function negotiated(accept: string, usable: RendererName[]): RendererName {
  const fallback = usable[0];
  const quality: Record<RendererName, number> = { json: -1, xml: -1 };
  const specificity: Record<RendererName, number> = { json: -1, xml: -1 };
  const entries = accept.slice(0, MAX_ACCEPT_LENGTH).split(",").slice(0, MAX_ENTRIES);
  for (const entry of entries) {
    const [type, ...params] = entry.split(";").map((s) => s.trim().toLowerCase());
    const q = qValue(params);
    for (const r of usable) {
      const spec = matches(type, r);
      // The most specific matching range decides a renderer's quality (RFC 9110).
      if (spec > specificity[r] || (spec === specificity[r] && spec >= 0 && q > quality[r])) {
        specificity[r] = spec;
        quality[r] = q;
      }
    }
  }
  let best: RendererName = fallback;
  let bestQ = 0;
  for (const r of usable) {
    if (quality[r] > bestQ) {
      best = r;
      bestQ = quality[r];
    }
  }
  return best;
}

/** -1 when `range` does not cover renderer `r`; else 0 (`*\/*`), 1 (`type/*`), 2 (exact). */
function matches(range: string, r: RendererName): number {
  if (range === "*/*" || range === "*") return 0;
  if (MEDIA_TYPES[range] === r) return 2;
  if (range.endsWith("/*")) {
    const major = range.slice(0, -2);
    return Object.entries(MEDIA_TYPES).some(([t, n]) => n === r && t.startsWith(major + "/"))
      ? 1
      : -1;
  }
  return -1;
}

function qValue(params: string[]): number {
  for (const p of params) {
    const m = /^q\s*=\s*([0-9.]+)$/.exec(p);
    if (m) {
      const q = Number(m[1]);
      return Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 1;
    }
  }
  return 1;
}
