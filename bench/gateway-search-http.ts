import { benchCatalogFile } from "./lib/catalog.ts";
import {
  alternatingRounds,
  DEFAULT_ROUNDS,
  gatewayFigures,
  startGatewayRig,
  summaryLine,
  type AlternatingFigures,
  type RoundOptions,
} from "./lib/gateway-rig.ts";
import { cycle } from "./lib/http-load.ts";
import { hitRates, scrapeMemoLookups } from "./lib/memo-lookups.ts";
import { realisticQueries } from "./lib/queries.ts";
import { runWhenMain, type Figure } from "./lib/results.ts";

export interface GatewaySearchFigures extends AlternatingFigures, RoundOptions {
  queries: number;
  catalog: string;
  meanPageBytes: number;
  /** Per memo, over the rounds: after the warm-up nearly every request is answered from memory. */
  memo: Record<string, { lookups: number; hitRate: number }>;
  figures: Figure[];
  summary: string[];
}

/**
 * The repeated mix: 400 realistic queries cycled through /nodes/search on the real gateway, as
 * a registry's traffic repeats itself (the Manager's list pages, popular names), against the
 * bare-Express baseline in alternating rounds.
 */
export async function run(opts: RoundOptions = DEFAULT_ROUNDS): Promise<GatewaySearchFigures> {
  const queries = realisticQueries(benchCatalogFile(), 400).map((q) => `/nodes/search?${q}`);
  const rig = await startGatewayRig(queries);
  try {
    let before = {};
    const figures = await alternatingRounds(rig, { gateway: cycle(queries), baseline: cycle(queries) }, opts, async () => {
      before = await scrapeMemoLookups(rig.gateway.url);
    });
    const memo = hitRates(before, await scrapeMemoLookups(rig.gateway.url));
    const hit = (m: string) => `${((memo[m]?.hitRate ?? 0) * 100).toFixed(1)}%`;
    return {
      ...opts,
      queries: queries.length,
      catalog: rig.catalog,
      meanPageBytes: rig.meanPageBytes,
      ...figures,
      memo,
      figures: gatewayFigures("search, repeated mix", figures, { throughput: "ratio ≥ 2.0", max: "≤ 250 ms" }),
      summary: [summaryLine("gateway repeated mix (target ≥ 2×; max ≤ 250 ms)", figures, `; memo hits: result ${hit("result")}`)],
    };
  } finally {
    await rig.stop();
  }
}

await runWhenMain(import.meta.url, () => run());
