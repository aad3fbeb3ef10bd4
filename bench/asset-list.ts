import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createReferenceStore, metadataConditions, type ReferenceStore } from "@app/upload/internal";
import { createTestDatabase } from "@app/testkit/postgres";
import { fillSqliteStore, fillStatements } from "./lib/asset-list-fill.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

/**
 * A page of GET /api/assets over 1,000,000 records of one owner, in the
 * ReferenceStore itself on both databases: the page the route asks for (20 records, newest
 * first, with the total) filtered by one tag of 100 (`tags_all`, 10,000 records) and a
 * `metadata_filter` on one of 50 values, against the same page with no filter as the baseline.
 * The records are written with SQL in bulk (through the store's own tables and index
 * entries), then the store is opened as the service opens it. ASSET_BENCH_REFS sets the count;
 * ASSET_BENCH_DATABASES=postgres (or sqlite) runs one database only (each fills its 1,000,000 anew).
 */
export interface AssetListFigures {
  records: number;
  runs: number;
  fillSec: Record<string, number>;
  /** Milliseconds per page (p50, p99), by database and query. */
  sqlite: Pages | null;
  postgres: Pages | null;
  figures: Figure[];
  summary: string[];
}
interface Page {
  p50: number;
  p99: number;
  total: number;
  /** The longest the bench's own event loop was held while the pages ran (monitorEventLoopDelay max, ms). */
  eventLoopMaxMs: number;
  /** Every measured run in the order it ran, ms: whether the slow ones are the first (a cache filling) or scattered (the machine). */
  runsMs: number[];
}
interface Pages {
  filtered: Page;
  unfiltered: Page;
}

const OWNER = "bench";
const RUNS = 60;

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 100) / 100;
}

async function pages(store: ReferenceStore): Promise<Pages> {
  const page = { sort: "created_at" as const, order: "desc" as const, limit: 20, offset: 0 };
  const none = { owner: OWNER, tagsAll: [] as string[], tagsAny: [] as string[], tagsNone: [] as string[], metadata: [] };
  const measure = async (filter: typeof none) => {
    const runsMs: number[] = [];
    let total = 0;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    for (let i = 0; i < RUNS + 3; i++) {
      const t = performance.now();
      const result = await store.list({ ...page, ...filter });
      if (i >= 3) runsMs.push(Math.round((performance.now() - t) * 10) / 10);
      total = result.total;
    }
    loop.disable();
    const times = [...runsMs].sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99), total, eventLoopMaxMs: Math.round(loop.max / 1e4) / 100, runsMs };
  };
  return {
    filtered: await measure({ ...none, tagsAll: ["t7"], metadata: metadataConditions({ group: "g7" }) as never }),
    unfiltered: await measure(none),
  };
}

async function sqlite(records: number, fillSec: Record<string, number>): Promise<Pages> {
  const dir = mkdtempSync(join(tmpdir(), "bench-asset-list-"));
  try {
    fillSec.sqlite = await fillSqliteStore(dir, records, OWNER);
    const store = await createReferenceStore({ DATA_DIR: dir });
    await store.init();
    try {
      return await pages(store);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(records: number, fillSec: Record<string, number>): Promise<Pages> {
  const db = await createTestDatabase("bench_asset_list");
  try {
    const store = await createReferenceStore({ DATA_DIR: tmpdir(), DATABASE_URL: db.url });
    await store.init();
    const t = performance.now();
    for (const statement of fillStatements(records, "postgres", OWNER)) await db.run(statement);
    fillSec.postgres = Math.round((performance.now() - t) / 100) / 10;
    try {
      return await pages(store);
    } finally {
      await store.close();
    }
  } finally {
    await db.drop();
  }
}

export async function run(): Promise<AssetListFigures> {
  const records = testEnv.ASSET_BENCH_REFS ?? 1_000_000;
  const fillSec: Record<string, number> = {};
  const databases = testEnv.ASSET_BENCH_DATABASES.split(",");
  const pg = databases.includes("postgres") ? await postgres(records, fillSec) : null;
  const lite = databases.includes("sqlite") ? await sqlite(records, fillSec) : null;
  const line = (name: string, p: Pages | null) =>
    p &&
    `asset list over ${records} records, ${name}: tag + metadata_filter page with total (${p.filtered.total}) p50 ${p.filtered.p50} ms, p99 ${p.filtered.p99} ms; unfiltered page with total p50 ${p.unfiltered.p50} ms, p99 ${p.unfiltered.p99} ms; event loop held at most ${Math.max(p.filtered.eventLoopMaxMs, p.unfiltered.eventLoopMaxMs)} ms`;
  const p99 = (name: string, p: Pages | null) =>
    p
      ? [
          figure(
            `asset list page over ${records.toLocaleString("en")} records, ${name}, tag + metadata_filter: p99`,
            p.filtered.p99,
            "ms",
            { baseline: ["the same page unfiltered", p.unfiltered.p99], goal: "< 50 ms" },
          ),
        ]
      : [];
  return {
    records,
    runs: RUNS,
    fillSec,
    sqlite: lite,
    postgres: pg,
    figures: [...p99("SQLite", lite), ...p99("PostgreSQL", pg)],
    summary: [line("SQLite", lite), line("PostgreSQL", pg)].filter((l) => l !== null),
  };
}

await runWhenMain(import.meta.url, () => run());
