import type { MirrorOptions } from "./mirror-options.ts";

/** A 4xx other than 429: asking again gives the same answer. */
export class PermanentHttpError extends Error {
  override name = "PermanentHttpError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * GET requests to one registry, each bounded twice (until the answer starts, then until its
 * body ends) and tried again on a 5xx, 429, network error or timeout, with doubling waits.
 * Counts every request it sends, retries included.
 */
export class RegistryHttp {
  requests = 0;
  readonly base: string;
  constructor(
    base: string,
    readonly o: Required<MirrorOptions>,
    private readonly doFetch: typeof fetch,
    readonly signal: AbortSignal,
  ) {
    this.base = base.replace(/\/+$/, "").replace(/\/nodes$/, "");
  }

  async get(path: string): Promise<unknown> {
    const url = this.base + path;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= this.o.attempts; attempt++) {
      try {
        this.requests++;
        return await fetchJson(this.doFetch, url, this.o, this.signal);
      } catch (err) {
        if (this.signal.aborted) throw this.signal.reason ?? err;
        if (err instanceof PermanentHttpError) throw err;
        lastErr = err;
        if (attempt < this.o.attempts) await abortableSleep(this.o.retryDelayMs * 2 ** (attempt - 1), this.signal);
      }
    }
    throw new Error(`${url}: ${describe(lastErr)} (after ${this.o.attempts} tries)`, { cause: lastErr });
  }
}

async function fetchJson(doFetch: typeof fetch, url: string, o: Required<MirrorOptions>, outer: AbortSignal): Promise<unknown> {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(outer.reason);
  outer.addEventListener("abort", onAbort, { once: true });
  let timer = setTimeout(() => ctl.abort(new Error(`no answer within ${o.headersTimeoutMs} ms`)), o.headersTimeoutMs);
  try {
    const res = await doFetch(url, { headers: { accept: "application/json" }, signal: ctl.signal });
    clearTimeout(timer);
    timer = setTimeout(() => ctl.abort(new Error(`body not complete within ${o.bodyTimeoutMs} ms`)), o.bodyTimeoutMs);
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new PermanentHttpError(`${url}: HTTP ${res.status}`, res.status);
    }
    return await res.json();
  } catch (err) {
    // An abort surfaces as a bare AbortError: say why instead.
    if (ctl.signal.aborted && !outer.aborted) throw ctl.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    outer.removeEventListener("abort", onAbort);
  }
}

/** fetch's "fetch failed" hides the reason in `cause` (ENOTFOUND, ECONNREFUSED…): bring it out. */
export function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return cause?.code ? `${err.message} (${cause.code})` : cause?.message ? `${err.message} (${cause.message})` : err.message;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
