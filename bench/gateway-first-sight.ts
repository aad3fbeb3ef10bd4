import { benchCatalogLines } from "./lib/catalog.ts";
import { firstSightQueries } from "./lib/first-sight-queries.ts";
import {
  alternatingRounds,
  DEFAULT_ROUNDS,
  gatewayFigures,
  startGatewayRig,
  summaryLine,
  type AlternatingFigures,
  type RoundOptions,
} from "./lib/gateway-rig.ts";
import { cycle, madeAhead } from "./lib/http-load.ts";
import { hitRates, scrapeMemoLookups, type MemoLookups } from "./lib/memo-lookups.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";

export interface GatewayFirstSightFigures extends AlternatingFigures, RoundOptions {
  /** Distinct query strings sent over the warm-up and the rounds (none twice). */
  distinctQueries: number;
  /** Of them, those made while the load ran, past the ones made ahead (0 unless the gateway outran AHEAD_PER_SEC). */
  madeLive: number;
  catalog: string;
  meanPageBytes: number;
  /** Per memo, over the rounds: parse and result must be ~0 (nothing was asked twice); typo and app_name are per word, which do repeat. */
  memo: Record<string, { lookups: number; hitRate: number }>;
  /** The gateway's RSS after the warm-up and after the rounds (target: within 64 MiB). */
  rssMiB: { before: number; after: number; growth: number };
  figures: Figure[];
  summary: string[];
}

const SAMPLE = 400;
/** Query strings made ahead per second of load: above what the gateway answers on the fastest machine measured, so none is made live. */
const AHEAD_PER_SEC = 30_000;

/**
 * The long tail through the real gateway: every request carries a query string the gateway has
 * never seen (`lib/first-sight-queries.ts`), so nothing is answered from a memo, against the
 * same bare-Express baseline (a page of the stream's mean answer size) in alternating rounds.
 */
export async function run(opts: RoundOptions = DEFAULT_ROUNDS): Promise<GatewayFirstSightFigures> {
  const stream = firstSightQueries(benchCatalogLines());
  const next = () => `/nodes/search?${stream.next().value}`;
  // The page-size sample is taken off the stream's head, so the rounds never ask it again.
  const sample = Array.from({ length: SAMPLE }, next);
  const rig = await startGatewayRig(sample);
  const ahead = madeAhead(next, AHEAD_PER_SEC * (opts.warmupSec + opts.rounds * opts.roundSec));
  let sent = 0;
  const counted = () => (sent++, ahead());
  try {
    let before: MemoLookups = {};
    let rssBefore = 0;
    const figures = await alternatingRounds(rig, { gateway: counted, baseline: cycle(sample) }, opts, async () => {
      before = await scrapeMemoLookups(rig.gateway.url);
      rssBefore = rig.gateway.rssKiB() / 1024;
    });
    const rssAfter = rig.gateway.rssKiB() / 1024;
    const memo = hitRates(before, await scrapeMemoLookups(rig.gateway.url));
    const rssMiB = { before: Math.round(rssBefore), after: Math.round(rssAfter), growth: Math.round(rssAfter - rssBefore) };
    const hit = (m: string) => `${((memo[m]?.hitRate ?? 0) * 100).toFixed(1)}%`;
    return {
      ...opts,
      distinctQueries: sent + SAMPLE,
      madeLive: ahead.live(),
      catalog: rig.catalog,
      meanPageBytes: rig.meanPageBytes,
      ...figures,
      memo,
      rssMiB,
      figures: [
        ...gatewayFigures("search, first sight", figures, { throughput: "ratio ≥ 1.0", p99: "ratio ≤ 2", max: "≤ 250 ms" }),
        figure("search, first sight: gateway RSS growth over the rounds", rssMiB.growth, "MiB", { goal: "≤ 64 MiB" }),
      ],
      summary: [
        summaryLine(
          "gateway first sight (target ≥ 1.0×; p99 ≤ 2×, max ≤ 250 ms)",
          figures,
          `; ${ahead.live()} queries made live; memo hits: parse ${hit("parse")}, result ${hit("result")}; RSS ${rssMiB.before} → ${rssMiB.after} MiB (+${rssMiB.growth}, target ≤ 64; after each round ${figures.perRound.map((r) => r.gatewayRssMiB).join(", ")})`,
        ),
      ],
    };
  } finally {
    await rig.stop();
  }
}

await runWhenMain(import.meta.url, () => run());
