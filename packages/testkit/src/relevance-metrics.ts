import type { JudgedQuery } from "./judged-queries.ts";

/** What the metrics need of a pack. */
export interface JudgedPack {
  id: string;
  publisher?: { id?: string };
}

/** The packs of the catalog that satisfy a judged query: its accepted ids, plus its publisher's packs for an author query. */
export function acceptableIds(q: JudgedQuery, packs: readonly JudgedPack[]): Set<string> {
  const present = new Set(packs.map((p) => p.id));
  const out = new Set(q.accept.filter((id) => present.has(id)));
  if (q.publisher) for (const p of packs) if (p.publisher?.id === q.publisher) out.add(p.id);
  return out;
}

export interface RelevanceFigures {
  queries: number;
  successAt1: number;
  successAt3: number;
  mrrAt10: number;
}

/** 1-based rank of the first acceptable id among the first `depth` results, else 0. */
export function firstHit(ranked: readonly string[], acceptable: ReadonlySet<string>, depth = 10): number {
  for (let i = 0; i < Math.min(depth, ranked.length); i++) if (acceptable.has(ranked[i]!)) return i + 1;
  return 0;
}

/** success@1, success@3 and MRR@10 over the first-hit ranks of each query (0 = none in the top ten). */
export function relevanceFigures(ranks: readonly number[]): RelevanceFigures {
  const n = ranks.length;
  const share = (ok: (r: number) => boolean) => (n === 0 ? 0 : round(ranks.filter(ok).length / n));
  return {
    queries: n,
    successAt1: share((r) => r === 1),
    successAt3: share((r) => r >= 1 && r <= 3),
    mrrAt10: n === 0 ? 0 : round(ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n),
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
