import type { Raw } from "../../ports/source-base.ts";
import { PermanentHttpError, type RegistryHttp } from "./http.ts";

interface Page {
  nodes: unknown[];
  total: number | undefined;
  totalPages: number | undefined;
}

/** What a read of the pack list found, beside its items. */
export interface PackListReport {
  /** The registry's count of the packs asked for, as its last page said. */
  total: number | undefined;
  /** Distinct pack ids read, over every pass. */
  distinct: number;
  /** Passes over the list (1, or more when one came back short). */
  passes: number;
  /** How many packs the registry counts that no pass returned. */
  missing: number;
  /** False when the registry refused `sort`: the order was not stable. */
  sorted: boolean;
}

export interface PackList {
  items: Raw[];
  report: PackListReport;
}

const idOf = (value: unknown): string | undefined => {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
};

/**
 * The registry's pack list, read so that none goes missing: in a stable order (`sort=id`; the
 * registry otherwise pages with OFFSET/LIMIT over rows that move as packs are installed),
 * banned packs included (`include_banned=true`, whatever the registry's default), past its
 * one-minute cache (`latest=true`), and only packs updated after `since` when given. When a
 * pass yields fewer distinct ids than the registry's total, the list is read again (up to
 * `rereads` times), each pass adding the ids the earlier ones missed.
 */
export async function readPackList(http: RegistryHttp, opts: { since?: string; onWarning?: (m: string) => void } = {}): Promise<PackList> {
  const o = http.o;
  let sorted = true;
  const query = (page: number) =>
    `/nodes?page=${page}&limit=${o.pageSize}${sorted ? "&sort=id" : ""}&include_banned=true&latest=true` +
    (opts.since ? `&timestamp=${encodeURIComponent(opts.since)}` : "");
  const get = async (page: number) => parsePage(http.base + query(page), await http.get(query(page)));
  const first = async (): Promise<Page> => {
    try {
      return await get(1);
    } catch (err) {
      if (!(err instanceof PermanentHttpError) || err.status !== 400 || !sorted) throw err;
      sorted = false;
      opts.onWarning?.(
        `${http.base}/nodes refused sort=id (${err.message}); paging in the registry's own order, which moves as packs are installed`,
      );
      return get(1);
    }
  };

  const items: Raw[] = [];
  const ids = new Set<string>();
  let total: number | undefined;
  let passes = 0;
  for (;;) {
    passes++;
    let idless = 0;
    const totals = new Set<number>();
    for await (const { page, body } of pagesInOrder(first, get, o.concurrency, o.pageSize)) {
      if (body.total !== undefined) totals.add(body.total);
      body.nodes.forEach((value, i) => {
        const id = idOf(value);
        if (id === undefined) idless++;
        if (id !== undefined && ids.has(id)) return;
        if (id !== undefined) ids.add(id);
        if (passes === 1 || id !== undefined)
          items.push({ where: `page ${page} item ${i + 1}${passes > 1 ? ` (pass ${passes})` : ""}`, value });
      });
    }
    total = [...totals].at(-1);
    if (totals.size > 1 && passes === 1) {
      opts.onWarning?.(`${http.base}/nodes: the registry's total changed during the read (${[...totals].join(" → ")})`);
    }
    const missing = total === undefined ? 0 : Math.max(0, total - ids.size - idless);
    if (missing === 0 || passes > o.rereads) return { items, report: { total, distinct: ids.size, passes, missing, sorted } };
  }
}

/** Page 1 first (it gives the page count), then the rest a few at a time, yielded in page order. */
async function* pagesInOrder(
  first: () => Promise<Page>,
  get: (page: number) => Promise<Page>,
  concurrency: number,
  pageSize: number,
): AsyncGenerator<{ page: number; body: Page }> {
  const one = await first();
  yield { page: 1, body: one };
  if (one.totalPages === undefined) {
    // No page count in the answer: read on, one page at a time, until a short page.
    for (let page = 2, last = one; last.nodes.length === pageSize; page++) {
      last = await get(page);
      yield { page, body: last };
    }
    return;
  }
  const inFlight = new Map<number, Promise<Page>>();
  let next = 2;
  for (let page = 2; page <= one.totalPages; page++) {
    while (next <= one.totalPages && inFlight.size < concurrency) {
      const p = get(next);
      p.catch(() => undefined); // awaited in order below; this keeps an early failure from going unhandled
      inFlight.set(next++, p);
    }
    const body = await inFlight.get(page)!;
    inFlight.delete(page);
    yield { page, body };
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
