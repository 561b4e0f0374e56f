/** Waits with deadlines: no test waits for ever. */

/** Resolves as `promise` does; rejects naming `what` once `ms` have passed. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every `everyMs` until it holds; rejects naming `what` once `ms` have passed. */
export async function until(
  check: () => boolean,
  what: string,
  options: { ms: number; everyMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${options.ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}

/**
 * Polls the asynchronous `check` every `everyMs` until it holds; rejects naming `what` once
 * `ms` have passed.
 */
export async function eventually(
  check: () => Promise<boolean>,
  what: string,
  options: { ms: number; everyMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${options.ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}
