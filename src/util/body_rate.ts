/**
 * The minimum data rate of a request body (MIN_REQUEST_BODY_RATE, after
 * MIN_REQUEST_BODY_RATE_GRACE_MS), as Kestrel's `MinRequestBodyDataRate` does: only the time
 * spent waiting for the client counts (not the time the service spends on what it read), and
 * once the grace period has passed the bytes received must keep up with the rate (give or take
 * a second, at most the grace period: bytes arrive in bursts). A body trickled a byte at a time
 * fails soon after the grace period; a large upload on a slow but steady link does not. The
 * reader of the body rejects with {@link SlowBodyError}, which the HTTP layer answers 408 with
 * (`Connection: close`).
 *
 * ```ts
 * const watch = new RateWatch({ bytesPerSecond: 240, graceMs: 5000 });
 * const step = await watch.read(reader.read(), (s) => s.value?.byteLength ?? 0);
 * ```
 */
import { setImmediate } from "node:timers";

/** The rule: at least `bytesPerSecond` of waiting, once `graceMs` of waiting have passed. */
export interface BodyRate {
  bytesPerSecond: number;
  graceMs: number;
}

/** How far (ms, at most the grace period) the waiting may run past what the bytes cover. */
const SLACK_MS = 1000;

/** The body came in under the minimum rate. */
export class SlowBodyError extends Error {
  constructor(readonly rate: BodyRate) {
    super(
      `the request body arrived slower than ${rate.bytesPerSecond} bytes per second ` +
        "(MIN_REQUEST_BODY_RATE)",
    );
    this.name = "SlowBodyError";
  }
}

/** A read being watched: the time by which it must settle, and how it fails then. */
interface Watched {
  deadline: number;
  fail(): void;
}

/**
 * Every read being watched, of every body, with one timer between them (set for the earliest
 * deadline) rather than one per read: a timer set and cleared around each small body's read
 * cost more than the rest of its reading. And a read is timed only once it is still waiting
 * at the next turn of the event loop (one check per turn, for every read started in it): a
 * small body has mostly arrived with its request, and its read settles before then.
 */
const watched = new Set<Watched>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** When the timer fires (`performance.now()`); Infinity when none is set. */
let timerAt = Infinity;
/** Whether the check of this turn's reads is due. */
let checkDue = false;

function watch(entry: Watched): void {
  watched.add(entry);
  if (checkDue) return;
  checkDue = true;
  setImmediate(check);
}

function unwatch(entry: Watched): boolean {
  if (!watched.delete(entry)) return false;
  // Nothing left to time: no timer outlives the reads.
  if (watched.size === 0 && timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
    timerAt = Infinity;
  }
  return true;
}

/** Times the reads still waiting: sets the timer for the earliest deadline, if any. */
function check(): void {
  checkDue = false;
  let next = Infinity;
  for (const w of watched) if (w.deadline < next) next = w.deadline;
  if (next < timerAt) {
    if (timer !== undefined) clearTimeout(timer);
    timerAt = next;
    timer = setTimeout(expire, Math.max(0, next - performance.now()));
  }
}

/** Fails the reads past their deadline and times the rest. */
function expire(): void {
  timer = undefined;
  timerAt = Infinity;
  const now = performance.now();
  for (const w of watched) {
    if (w.deadline <= now) {
      watched.delete(w);
      w.fail();
    }
  }
  check();
}

/** Watches the reads of one body; without a rule (null, or a rate of 0) it only passes them on. */
export class RateWatch {
  #bytes = 0;
  /** Milliseconds spent waiting on reads so far. */
  #waited = 0;

  constructor(readonly rule: BodyRate | null) {}

  /**
   * Waits for `pending` (one read of the body), counting its `size`; rejects with
   * {@link SlowBodyError} at the moment the body falls under the rate. The caller then cancels
   * the body (which ends `pending`).
   */
  read<T>(pending: Promise<T>, size: (value: T) => number): Promise<T> {
    const rule = this.rule;
    if (!rule || rule.bytesPerSecond <= 0) return pending;
    const started = performance.now();
    // Waiting may go on until the bytes so far no longer cover the time waited, give or take
    // the slack (Kestrel checks once a second; bytes arrive in bursts).
    const slack = Math.min(SLACK_MS, rule.graceMs);
    const covered = Math.max(rule.graceMs, (this.#bytes * 1000) / rule.bytesPerSecond);
    const allowed = covered + slack - this.#waited;
    return new Promise<T>((resolve, reject) => {
      const entry: Watched = {
        deadline: started + Math.max(0, allowed),
        fail: () => reject(new SlowBodyError(rule)),
      };
      watch(entry);
      pending.then((value) => {
        // Already failed (past its deadline): the rejection stands.
        if (!unwatch(entry)) return;
        this.#waited += performance.now() - started;
        this.#bytes += size(value);
        resolve(value);
      }, (error) => {
        unwatch(entry);
        reject(error);
      });
    });
  }
}
