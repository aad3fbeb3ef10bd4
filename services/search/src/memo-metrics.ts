import { registerCollectedCounter } from "@app/platform";
import { memoLookups } from "./fast/bounded-memo.ts";

/**
 * `search_memo_lookups_total{memo, outcome}`: how often each memo (parse, result, text, typo,
 * app_name) answered from memory. The first-sight benchmark reads it to prove that its
 * traffic was never remembered; an operator reads it to see how much traffic repeats.
 */
export function registerMemoMetrics(): void {
  registerCollectedCounter({
    name: "search_memo_lookups_total",
    help: "Search memo lookups by memo and outcome (hit: answered from memory)",
    labelNames: ["memo", "outcome"] as const,
    *read() {
      for (const [memo, { hits, misses }] of memoLookups()) {
        yield { labels: { memo, outcome: "hit" }, value: hits };
        yield { labels: { memo, outcome: "miss" }, value: misses };
      }
    },
  });
}
