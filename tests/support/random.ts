/** Seeded randomness for generated tests: the same seed makes the same cases. */

/** A small seeded generator (mulberry32) of numbers in [0, 1). */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One member of `list`, chosen with `rnd`. */
export function pick<T>(rnd: () => number, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

/** The seed of a generated test: `FUZZ_SEED`, or a fixed one so that every run is the same. */
export function fuzzSeed(): number {
  return Number(Deno.env.get("FUZZ_SEED") ?? 20261125);
}
