import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { LRUCache } from "lru-cache";
import { BoundedMemo } from "@app/search/internal";

/**
 * Same-run A/B of the search memos: the hand-written `BoundedMemo` (a Bloom filter, `SeenBefore`,
 * lets a key in from its second request; the map is dropped whole when full) against lru-cache
 * with the same bounds, in process, over the parse memo's shape (query string → a small object).
 * Two workloads: a repeated mix (2,000 query strings, skewed as traffic is) and first sight (every
 * key new, as a search box's keystrokes are). Rounds alternate A and B; the medians are kept.
 *
 * `node --expose-gc --import tsx bench/memo-lru-ab.ts` writes bench/results/memo-lru-ab.json.
 */

interface Memo {
  getOrCompute(key: string, compute: () => object): object;
}

const MAX_ENTRIES = 16_384;
const MAX_WEIGHT = 8_000_000;
const weigh = (_v: object, key: string) => key.length + 64;

/** lru-cache with the parse memo's bounds; every key is remembered from its first request. */
function lruMemo(): Memo {
  const cache = new LRUCache<string, object>({ max: MAX_ENTRIES, maxSize: MAX_WEIGHT, sizeCalculation: weigh });
  return {
    getOrCompute(key, compute) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const value = compute();
      cache.set(key, value);
      return value;
    },
  };
}

/** lru-cache, a key let in from its second request by a second lru-cache of keys seen (the Bloom filter's job). */
function lruMemoSeenTwice(): Memo {
  const cache = new LRUCache<string, object>({ max: MAX_ENTRIES, maxSize: MAX_WEIGHT, sizeCalculation: weigh });
  const seen = new LRUCache<string, true>({ max: 65_536 });
  return {
    getOrCompute(key, compute) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const value = compute();
      if (seen.has(key)) cache.set(key, value);
      else seen.set(key, true);
      return value;
    },
  };
}

const VARIANTS: Record<string, () => Memo> = {
  handWritten: () => new BoundedMemo<object>("ab", weigh, MAX_ENTRIES, MAX_WEIGHT),
  lruCache: lruMemo,
  lruCacheSeenTwice: lruMemoSeenTwice,
};

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ["impact", "controlnet", "upscale", "video", "lora", "face", "mask", "sampler", "flux", "wan", "animate", "segment", "depth", "prompt", "image", "latent"];
const queryString = (i: number) => `search=${WORDS[i % WORDS.length]}${i}&limit=20&page=${1 + (i % 3)}`;

/** The repeated mix: 2,000 strings, the low ones far more often (squared uniform draw). */
function repeatedKeys(n: number): string[] {
  const rand = rng(42);
  const pool = Array.from({ length: 2_000 }, (_, i) => queryString(i));
  return Array.from({ length: n }, () => pool[Math.floor(rand() ** 2 * pool.length)]!);
}
const firstSightKeys = (n: number, round: number) => Array.from({ length: n }, (_, i) => queryString(1_000_000 * (round + 1) + i));

const gc = () => (globalThis as { gc?: () => void }).gc?.();

/** The memo of the run in progress, held where the optimizer cannot see that it is no longer read. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read, on purpose (above)
let held: Memo | undefined;

/** One pass of `keys` through a new memo: time per lookup, and the heap the memo still holds after it. */
function runOnce(make: () => Memo, keys: string[]): { nsPerLookup: number; retainedMiB: number } {
  gc();
  const memo = (held = make());
  const t0 = process.hrtime.bigint();
  let sink = 0;
  for (const k of keys) sink += (memo.getOrCompute(k, () => ({ search: k, limit: 20, offset: 0 })) as { limit: number }).limit;
  const ns = Number(process.hrtime.bigint() - t0);
  gc();
  const withMemo = process.memoryUsage().heapUsed;
  held = undefined;
  gc();
  const retained = withMemo - process.memoryUsage().heapUsed;
  if (sink === 0) throw new Error("unreachable");
  return { nsPerLookup: Math.round((ns / keys.length) * 10) / 10, retainedMiB: Math.round((retained / 2 ** 20) * 10) / 10 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function run(opts = { rounds: 7, lookups: 400_000 }) {
  const repeated = repeatedKeys(opts.lookups);
  const samples: Record<string, Record<string, { ns: number[]; retained: number[] }>> = {};
  for (let round = 0; round < opts.rounds; round++) {
    const firstSight = firstSightKeys(opts.lookups, round);
    // Alternate the order so that neither variant always runs on a warmer or colder machine.
    const names = round % 2 === 0 ? Object.keys(VARIANTS) : Object.keys(VARIANTS).reverse();
    for (const [workload, keys] of [["repeated", repeated], ["firstSight", firstSight]] as const) {
      for (const name of names) {
        const r = runOnce(VARIANTS[name]!, keys);
        const s = ((samples[workload] ??= {})[name] ??= { ns: [], retained: [] });
        s.ns.push(r.nsPerLookup);
        s.retained.push(r.retainedMiB);
      }
    }
  }
  const figures = Object.fromEntries(
    Object.entries(samples).map(([workload, byVariant]) => [
      workload,
      Object.fromEntries(Object.entries(byVariant).map(([name, s]) => [name, { medianNsPerLookup: median(s.ns), medianRetainedMiB: median(s.retained) }])),
    ]),
  );
  return { lookupsPerRound: opts.lookups, rounds: opts.rounds, figures };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const load = loadavg()[0]!;
  const result = run();
  const out = {
    bench: "memo-lru-ab",
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version },
    date: new Date().toISOString(),
    load: { before: load, after: loadavg()[0] },
    baseline: "handWritten (BoundedMemo with SeenBefore)",
    ...result,
  };
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("./results/memo-lru-ab.json", import.meta.url), JSON.stringify(out, null, 2) + "\n");
  console.log(JSON.stringify(out, null, 2));
}
