/**
 * Figures for the README, not a test: job round trips on the local Redis (BullMQ) against the
 * in-process queue as the baseline, measured in the same run. `npx tsx packages/jobs/bench/round-trip.ts`
 */
import { createServer } from "node:net";
import { once } from "node:events";
import { BullMqJobQueue, InProcessJobQueue, QueueUnavailableError, type JobQueue } from "../src/index.ts";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";

const SEQUENTIAL = 300;
const BATCH = 2000;

const handler = async ({ source }: { source: string }) => ({ read: source.length, indexed: 1, skipped: 0, durationMs: 0 });

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(label: string, make: (concurrency: number) => JobQueue): Promise<Record<string, string>> {
  const q = make(2);
  await q.work({ "catalog.reindex": handler });
  const lat: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await q.run("catalog.reindex", { source: `seq-${i}` }, { jobId: `seq-${i}`, timeoutMs: 10_000 });
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  const dedup: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await q.run("catalog.reindex", { source: `seq-${i}` }, { jobId: `seq-${i}`, timeoutMs: 10_000 });
    dedup.push(performance.now() - t);
  }
  dedup.sort((a, b) => a - b);
  await q.close();

  const rows: Record<string, string> = {
    queue: label,
    "run() p50 ms": pct(lat, 50).toFixed(2),
    "run() p99 ms": pct(lat, 99).toFixed(2),
    "completed id again p50 ms": pct(dedup, 50).toFixed(2),
  };
  for (const concurrency of [2, 8]) {
    const b = make(concurrency);
    await b.work({ "catalog.reindex": handler });
    const t = performance.now();
    await Promise.all(
      Array.from({ length: BATCH }, (_, i) =>
        b.run("catalog.reindex", { source: `batch-${concurrency}-${i}` }, { jobId: `batch-${concurrency}-${i}`, timeoutMs: 60_000 }),
      ),
    );
    const s = (performance.now() - t) / 1000;
    rows[`${BATCH} jobs at c=${concurrency}, s`] = s.toFixed(2);
    rows[`jobs/s at c=${concurrency}`] = Math.round(BATCH / s).toString();
    await b.close();
  }
  return rows;
}

async function failFastMs(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  const q = new BullMqJobQueue({ redisUrl: `redis://127.0.0.1:${port}`, prefix: "bench-unreachable" });
  const t = performance.now();
  const err = await q.enqueue("catalog.reindex", { source: "x" }, { jobId: "x" }).catch((e: unknown) => e);
  const ms = performance.now() - t;
  await q.close();
  if (!(err instanceof QueueUnavailableError)) throw new Error("expected QueueUnavailableError");
  return ms;
}

const prefixes: string[] = [];
try {
  const rows = [
    await measure("in-process (baseline)", (concurrency) => new InProcessJobQueue({ concurrency })),
    await measure("bullmq, local Redis", (concurrency) => {
      const prefix = uniquePrefix("bench");
      prefixes.push(prefix);
      return new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, prefix, concurrency });
    }),
  ];
  console.table(rows);
  console.log(`enqueue with Redis unreachable: QueueUnavailableError after ${(await failFastMs()).toFixed(0)} ms`);
} finally {
  await deleteKeys(prefixes);
}
