import { setFlagsFromString } from "node:v8";
import type { Config } from "./config.ts";

/**
 * For processes that take uploads. An upload moves its bytes through Node's socket buffers,
 * which V8 counts as external memory: 40 MB of them arrive between two young-generation GCs,
 * and V8 counts what arrived since the last full GC against the old generation's limit. With
 * its own growth policy that limit sits some 20 MB above a ~25 MB heap, so a steady upload
 * started a full mark-compact every 15–20 MB (a third of the process's CPU, measured with
 * --trace-gc and perf); a fixed growth of HEAP_GROWTH_PERCENT after each full GC leaves room for
 * the bytes in flight (3–4 full GCs instead of 23–30 over 20 uploads of 40 MB, and 640 MB/s instead
 * of 410–485). The flag is read at every full GC, so setting it at start is enough. V8 still
 * caps the limit halfway to the heap's maximum; a process holding a very large catalog as
 * well may prefer 0 (V8's policy) to keep its peak heap lower.
 */
export function tuneHeapForUploads(config: Pick<Config, "HEAP_GROWTH_PERCENT">): void {
  if (config.HEAP_GROWTH_PERCENT > 0) setFlagsFromString(`--heap-growing-percent=${config.HEAP_GROWTH_PERCENT}`);
}
