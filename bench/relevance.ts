import { EmbeddedSearchEngine, loadCatalog, parseSearchQuery, toEngineQuery } from "@app/search/internal";
import { testCatalog } from "@app/testkit/catalog";
import { JUDGED_QUERIES, type JudgedKind, type JudgedQuery } from "@app/testkit/judged-queries";
import { acceptableIds, firstHit, relevanceFigures, type RelevanceFigures } from "@app/testkit/relevance-metrics";
import { Fts5Bm25 } from "./lib/bm25-fts5.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";
import { substringSearch } from "./lib/substring-search.ts";

type Engine = (query: string) => Promise<string[]> | string[];

export interface RelevanceBenchFigures {
  catalog: string;
  judged: number;
  /** Queries none of whose acceptable packs is in this catalog (the generated fixture lacks most real packs). */
  skipped: number;
  ours: RelevanceFigures;
  bm25: RelevanceFigures;
  substring: RelevanceFigures;
  /** Ours, success@3 by kind of query. */
  oursByKind: Partial<Record<JudgedKind, { queries: number; successAt3: number }>>;
  /** The judged set's popular-pack examples: the rank (0 = not in the top ten) of the pack most people mean, per engine. */
  popular: { q: string; pack: string; ours: number; bm25: number; substring: number }[];
  /** Ours: the queries with no acceptable pack in the top three, and what came first. */
  oursMisses: { q: string; rank: number; top3: string[] }[];
  figures: Figure[];
  summary: string[];
}

/**
 * `pnpm bench relevance`: the judged query set (`@app/testkit/judged-queries`) through our
 * embedded engine, an untuned bm25 engine (SQLite FTS5) and the public registry's substring
 * search, on the same catalog: success@1, success@3 and MRR@10 each.
 */
export async function run(): Promise<RelevanceBenchFigures> {
  const catalog = testCatalog();
  const { records } = await loadCatalog(catalog.path);
  const engine = new EmbeddedSearchEngine();
  await engine.replaceAll(records);
  const ours: Engine = async (q) => {
    const parsed = parseSearchQuery({ search: q, limit: "10" });
    if (!parsed.ok) throw new Error(`judged query ${q} is invalid: ${parsed.message}`);
    return (await engine.search(toEngineQuery(parsed.query))).nodes.map((n) => n.id);
  };
  const fts = new Fts5Bm25(records);
  const bm25: Engine = (q) => fts.search(q, 10);
  const substr = substringSearch(records);
  const substring: Engine = (q) => substr(q, 10);

  const judged: { q: JudgedQuery; ok: Set<string> }[] = [];
  for (const q of JUDGED_QUERIES) {
    const ok = acceptableIds(q, records);
    if (ok.size > 0) judged.push({ q, ok });
  }
  const ranks = async (e: Engine) => {
    const out: { rank: number; top: string[] }[] = [];
    for (const { q, ok } of judged) {
      const top = await e(q.q);
      out.push({ rank: firstHit(top, ok), top });
    }
    return out;
  };
  const o = await ranks(ours);
  const b = await ranks(bm25);
  const s = await ranks(substring);
  fts.close();
  await engine.close();

  const oursByKind: RelevanceBenchFigures["oursByKind"] = {};
  for (const kind of new Set(judged.map((x) => x.q.kind))) {
    const r = judged.flatMap((x, i) => (x.q.kind === kind ? [o[i]!.rank] : []));
    oursByKind[kind] = { queries: r.length, successAt3: relevanceFigures(r).successAt3 };
  }
  const rankOf = (list: { top: string[] }[], i: number, pack: string) => firstHit(list[i]!.top, new Set([pack]));
  const popular = judged.flatMap(({ q }, i) =>
    q.popular
      ? [{ q: q.q, pack: q.popular, ours: rankOf(o, i, q.popular), bm25: rankOf(b, i, q.popular), substring: rankOf(s, i, q.popular) }]
      : [],
  );
  const figures = {
    ours: relevanceFigures(o.map((x) => x.rank)),
    bm25: relevanceFigures(b.map((x) => x.rank)),
    substring: relevanceFigures(s.map((x) => x.rank)),
  };
  const line = (name: string, f: RelevanceFigures) =>
    `${name} s@1 ${f.successAt1.toFixed(3)}, s@3 ${f.successAt3.toFixed(3)}, MRR@10 ${f.mrrAt10.toFixed(3)}`;
  const popularInTop3 = popular.filter((p) => p.ours >= 1 && p.ours <= 3).length;
  return {
    catalog: catalog.description,
    judged: judged.length,
    skipped: JUDGED_QUERIES.length - judged.length,
    ...figures,
    oursByKind,
    popular,
    oursMisses: judged.flatMap(({ q }, i) =>
      o[i]!.rank >= 1 && o[i]!.rank <= 3 ? [] : [{ q: q.q, rank: o[i]!.rank, top3: o[i]!.top.slice(0, 3) }],
    ),
    figures: [
      figure(`relevance, MRR@10 over ${judged.length} judged queries`, figures.ours.mrrAt10, "", {
        baseline: ["untuned bm25 (SQLite FTS5)", figures.bm25.mrrAt10],
      }),
      figure(`relevance, success@3 over ${judged.length} judged queries`, figures.ours.successAt3, "", {
        baseline: ["untuned bm25 (SQLite FTS5)", figures.bm25.successAt3],
      }),
      figure(`relevance, MRR@10 over ${judged.length} judged queries`, figures.ours.mrrAt10, "", {
        baseline: ["the registry's substring search", figures.substring.mrrAt10],
      }),
    ],
    summary: [
      `relevance (${judged.length} judged queries, ${JUDGED_QUERIES.length - judged.length} skipped; ${catalog.kind} catalog): ${line("ours", figures.ours)} | ${line("bm25 (FTS5)", figures.bm25)} | ${line("substring (registry)", figures.substring)}; popular pack in ours' top 3 for ${popularInTop3} of ${popular.length} examples`,
    ],
  };
}

await runWhenMain(import.meta.url, () => run());
