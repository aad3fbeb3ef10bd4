import { BaseSource, type LoadOptions, type MirrorOptions, type Raw } from "./source-base.ts";

const DEFAULTS: Required<MirrorOptions> = {
  pageSize: 100,
  concurrency: 4,
  attempts: 4,
  retryDelayMs: 500,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 60_000,
};

interface Page {
  nodes: unknown[];
  total: number | undefined;
  totalPages: number | undefined;
}

/**
 * Mirror mode: page through `GET <base>/nodes?page=&limit=` of a registry-compatible API.
 * Page 1 gives the number of pages; the rest are fetched a few at once and yielded in order.
 * Each page is retried on its own, so one 500 or one stalled answer costs one page, not the mirror.
 */
export class RegistryApiSource extends BaseSource {
  readonly description: string;
  readonly kind = "registry" as const;
  private readonly listUrl: string;
  constructor(base: string) {
    super();
    const trimmed = base.replace(/\/+$/, "");
    this.listUrl = /\/nodes$/.test(trimmed) ? trimmed : `${trimmed}/nodes`;
    this.description = `registry ${this.listUrl}`;
  }

  protected async *raw(opts: LoadOptions): AsyncGenerator<Raw> {
    const o = { ...DEFAULTS, ...opts.mirror };
    // Our own controller, so pages still in flight stop when the consumer stops early or fails.
    const stop = new AbortController();
    const onOuterAbort = () => stop.abort(opts.signal?.reason);
    opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
    const get = (page: number) => fetchPage(opts.fetch ?? fetch, `${this.listUrl}?page=${page}&limit=${o.pageSize}`, o, stop.signal);
    try {
      const first = await get(1);
      yield* items(1, first);
      if (first.totalPages === undefined) {
        // No page count in the answer: read on, one page at a time, until a short page.
        for (let page = 2, last = first; last.nodes.length === o.pageSize; page++) {
          last = await get(page);
          yield* items(page, last);
        }
        return;
      }
      const inFlight = new Map<number, Promise<Page>>();
      let next = 2;
      const totals = new Set<number>(first.total === undefined ? [] : [first.total]);
      for (let page = 2; page <= first.totalPages; page++) {
        while (next <= first.totalPages && inFlight.size < o.concurrency) {
          const p = get(next);
          p.catch(() => undefined); // awaited in order below; this keeps an early failure from going unhandled
          inFlight.set(next++, p);
        }
        const body = await inFlight.get(page)!;
        inFlight.delete(page);
        if (body.total !== undefined) totals.add(body.total);
        yield* items(page, body);
      }
      if (totals.size > 1) {
        opts.onWarning?.(
          `${this.listUrl}: the registry's total changed during the mirror (${[...totals].join(" → ")}); ` +
            "a node that moved between pages may be missing until the next refresh (one seen twice is kept once)",
        );
      }
    } finally {
      opts.signal?.removeEventListener("abort", onOuterAbort);
      stop.abort();
    }
  }
}

function* items(page: number, body: Page): Generator<Raw> {
  for (let i = 0; i < body.nodes.length; i++) yield { where: `page ${page} item ${i + 1}`, value: body.nodes[i] };
}

class PermanentError extends Error {}

async function fetchPage(doFetch: typeof fetch, url: string, o: Required<MirrorOptions>, signal: AbortSignal): Promise<Page> {
  let lastErr: unknown;
  for (let attempt = 1; attempt <= o.attempts; attempt++) {
    try {
      return parsePage(url, await fetchJson(doFetch, url, o, signal));
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      if (err instanceof PermanentError) throw err;
      lastErr = err;
      if (attempt < o.attempts) await abortableSleep(o.retryDelayMs * 2 ** (attempt - 1), signal);
    }
  }
  throw new Error(`${url}: ${describe(lastErr)} (after ${o.attempts} tries)`, { cause: lastErr });
}

/** One request, bounded twice: until the answer starts (connecting included), then until its body ends. */
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
      throw new PermanentError(`${url}: HTTP ${res.status}`);
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

function parsePage(url: string, body: unknown): Page {
  const b = (body ?? {}) as { nodes?: unknown; total?: unknown; totalPages?: unknown };
  if (!Array.isArray(b.nodes)) throw new Error(`${url}: answer has no nodes array`);
  const total = Number(b.total);
  const totalPages = Number(b.totalPages);
  return {
    nodes: b.nodes,
    total: Number.isInteger(total) && total >= 0 ? total : undefined,
    totalPages: b.totalPages !== undefined && Number.isInteger(totalPages) && totalPages >= 0 ? totalPages : undefined,
  };
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
