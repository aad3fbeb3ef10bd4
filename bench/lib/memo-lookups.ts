/** `search_memo_lookups_total` as the service's /metrics reports it, by memo name. */
export type MemoLookups = Record<string, { hits: number; misses: number }>;

export async function scrapeMemoLookups(url: string): Promise<MemoLookups> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: MemoLookups = {};
  for (const m of text.matchAll(/^search_memo_lookups_total\{memo="([^"]+)",outcome="(hit|miss)"\} (\d+)$/gm)) {
    const counts = (out[m[1]!] ??= { hits: 0, misses: 0 });
    if (m[2] === "hit") counts.hits = Number(m[3]);
    else counts.misses = Number(m[3]);
  }
  return out;
}

/** Hits / lookups per memo between two scrapes. */
export function hitRates(before: MemoLookups, after: MemoLookups): Record<string, { lookups: number; hitRate: number }> {
  const out: Record<string, { lookups: number; hitRate: number }> = {};
  for (const [memo, a] of Object.entries(after)) {
    const b = before[memo] ?? { hits: 0, misses: 0 };
    const hits = a.hits - b.hits;
    const lookups = hits + a.misses - b.misses;
    out[memo] = { lookups, hitRate: lookups > 0 ? Math.round((hits / lookups) * 10_000) / 10_000 : 0 };
  }
  return out;
}
