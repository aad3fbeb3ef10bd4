import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { BullMqJobQueue } from "@app/jobs";
import { FsBlobStore } from "@app/upload/internal";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";
import { runScript, SCRIPTS, startService, type Service } from "@app/testkit/processes";
import { testCatalog } from "@app/testkit/catalog";

/** The worker as it runs in production: `src/main.ts` in its own process, on the real Redis. */
const CATALOG = testCatalog().path;
const RECORDS = testCatalog().records;

const prefix = uniquePrefix("worker-process");
const dataDir = mkdtempSync(join(tmpdir(), "worker-process-"));
let worker: Service | undefined;
let producer: BullMqJobQueue;

async function png(width: number, height: number, channels: 3 | 4, fill: number[]): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * channels);
  for (let i = 0; i < raw.length; i++) raw[i] = fill[i % channels]!;
  return sharp(raw, { raw: { width, height, channels } }).png().toBuffer();
}

async function store(blobs: FsBlobStore, bytes: Buffer, width: number, height: number): Promise<string> {
  const staged = await blobs.stage(Readable.from([bytes]));
  const now = new Date().toISOString();
  await staged.commit(
    (existing) =>
      existing ?? {
        hash: staged.hash,
        ext: "png",
        size: staged.size,
        mime: "image/png",
        width,
        height,
        first_uploaded_at: now,
        last_uploaded_at: now,
        tags: [],
      },
  );
  return staged.hash;
}

beforeAll(async () => {
  worker = await startService(
    SCRIPTS.worker,
    { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, DATA_DIR: dataDir, LOG_LEVEL: "info" },
    { timeoutMs: 30_000 },
  );
  producer = new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, prefix });
});

afterAll(async () => {
  await worker?.kill("SIGKILL");
  await producer?.close();
  await deleteKeys([prefix]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the worker process", () => {
  it("reindexes the real catalog, reporting progress through the job", async () => {
    const progress: Record<string, unknown>[] = [];
    const result = await producer.run(
      "catalog.reindex",
      { source: CATALOG },
      { jobId: `catalog.reindex:${CATALOG}:test`, timeoutMs: 60_000, onProgress: (p) => progress.push(p) },
    );
    expect(result.read).toBe(RECORDS);
    expect(result.indexed + result.skipped).toBe(result.read);
    expect(result.indexed + result.skipped).toBe(RECORDS);
    expect(result.indexed).toBeGreaterThan(RECORDS * 0.9);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ phase: "done", read: RECORDS });
  });

  it("derives the mask images from blobs in the shared store", async () => {
    const blobs = new FsBlobStore(join(dataDir, "blobs"));
    await blobs.init();
    const originalHash = await store(blobs, await png(8, 6, 3, [200, 100, 50]), 8, 6);
    const maskHash = await store(blobs, await png(4, 3, 4, [0, 0, 0, 0]), 4, 3);
    const data = { originalHash, maskHash };
    const result = await producer.run("mask.derive", data, { jobId: `mask.derive:${originalHash}:${maskHash}`, timeoutMs: 30_000 });
    expect(result).toEqual({
      maskType: "alpha",
      painted: expect.stringMatching(/^[0-9a-f]{64}\.png$/),
      paint: expect.stringMatching(/^[0-9a-f]{64}\.png$/),
    });
    const hashes = await blobs.list();
    expect(hashes).toContain(result.painted.slice(0, 64));
    expect(hashes).toContain(result.paint.slice(0, 64));
  });

  it("counts the jobs it ran in /metrics", async () => {
    const text = await (await fetch(`${worker!.url}/metrics`)).text();
    expect(text).toMatch(/jobs_total\{name="catalog\.reindex",outcome="completed"\} 1/);
    expect(text).toMatch(/jobs_total\{name="mask\.derive",outcome="completed"\} 1/);
    expect(text).toMatch(/job_duration_seconds_count\{name="mask\.derive"\} 1/);
  });

  it("on SIGTERM finishes the job it is running, stores the result and exits 0", async () => {
    const jobId = `catalog.reindex:${CATALOG}:drain`;
    let sawProgress!: () => void;
    const running = new Promise<void>((r) => (sawProgress = r));
    const waiting = producer.run("catalog.reindex", { source: CATALOG }, { jobId, timeoutMs: 60_000, onProgress: () => sawProgress() });
    await running;
    const exited = once(worker!.child, "exit");
    worker!.child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
    await expect(waiting).resolves.toMatchObject({ read: RECORDS });
    expect(await producer.inspect(jobId)).toMatchObject({ state: "completed", attemptsMade: 1 });
  });
});

describe("the worker process without REDIS_URL", () => {
  it("refuses to start and says why", async () => {
    const { code, stdout, stderr } = await runScript(SCRIPTS.worker, [], { REDIS_URL: "", DATA_DIR: dataDir, PORT: "0" });
    expect(code).toBe(1);
    expect(stdout + stderr).toContain("REDIS_URL is not set");
  });
});
