import { setFlagsFromString } from "node:v8";
import type { Config } from "./config.ts";

/**
 * For processes that take uploads. An upload's bytes pass through Node's socket buffers, which
 * V8 counts as external memory, and V8 starts a full mark-compact when the old generation plus
 * the external memory allocated since the last one reaches the old generation's limit. With
 * V8's own growth policy that limit sat some 20 MB above a ~25 MB heap, so a steady upload
 * started a full GC every 15–20 MB ("allocation limit" at 24 of 47 MB in
 * --trace-incremental-marking; a third of the process's CPU in perf). A fixed growth of
 * HEAP_GROWTH_PERCENT after each full GC leaves room for the bytes in flight: 3–4 full GCs
 * instead of 23–30 over 20 uploads of 40 MB, and 640 MB/s instead of 410–485. V8 reads the flag
 * at every full GC, so setting it at start is enough, and still caps the limit halfway to the
 * heap's maximum; a process that also holds a very large catalog may prefer 0 (V8's policy) to
 * keep its peak heap lower.
 */
export function tuneHeapForUploads(config: Pick<Config, "HEAP_GROWTH_PERCENT">): void {
  if (config.HEAP_GROWTH_PERCENT > 0) setFlagsFromString(`--heap-growing-percent=${config.HEAP_GROWTH_PERCENT}`);
}

/**
 * For processes that serve search. Loading a catalog keeps tens of thousands of objects made by
 * the same allocation sites that later serve requests (zod's parse results, arrays, small
 * objects), so V8's allocation-site pretenuring decides those sites' objects live long and
 * allocates them straight into the old generation. A request's objects then die there: slower
 * allocation, write barriers, and a full mark-compact to free them. Measured in process on
 * first-sight queries after loading the real catalog: the query parse 21-28 µs -> 3-5 µs, and
 * parse + search + page text 334 -> 250 µs of CPU per query; the 5.9k-node build no slower.
 * Set before the catalog loads (V8 reads the flag at each collection).
 */
export function tuneHeapForSearch(): void {
  setFlagsFromString("--no-allocation-site-pretenuring");
}
