import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateCatalog } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { BullMqJobQueue } from "@app/jobs";
import { SCRIPTS, startService, waitUntil, type Service } from "@app/testkit/processes";
import { bullCounts, TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";

/**
 * At scale the refresh is one BullMQ job scheduler: two worker processes, as two replicas would
 * run, both upsert it at start, and every refresh is run by exactly one of them.
 */
const prefix = uniquePrefix("worker-refresh");
const dataDir = mkdtempSync(join(tmpdir(), "worker-refresh-"));
const workers: Service[] = [];
let registry: FakeRegistry | undefined;

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await registry?.stop();
  await deleteKeys([prefix]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the catalog refresh on BullMQ", () => {
  it("two workers, one scheduler: each tick's mirror runs once and lands in the shared snapshot", async () => {
    registry = await new FakeRegistry(generateCatalog({ seed: 3, nodes: 300 })).start();
    const env = { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, DATA_DIR: dataDir, CATALOG_SOURCE: registry.url, CATALOG_REFRESH: "1s" };
    for (let i = 0; i < 2; i++) workers.push(await startService(SCRIPTS.worker, env, { timeoutMs: 60_000 }));
    await waitUntil(async () => (await bullCounts(prefix)).completed >= 4, "four refreshes", { tries: 1200 });
    expect((await bullCounts(prefix)).schedulers).toBe(1);
    // Stop the schedule, let the run in progress (if any) finish on its worker, then count.
    const admin = new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, prefix });
    await admin.unschedule("catalog-refresh");
    await admin.close();
    await waitUntil(
      async () => {
        const c = await bullCounts(prefix);
        return c.active + c.waiting + c.delayed === 0;
      },
      "the last refresh to finish",
      { tries: 1200 },
    );
    const { completed, failed, schedulers } = await bullCounts(prefix);
    expect(schedulers).toBe(0);
    expect(completed).toBeGreaterThanOrEqual(4);
    expect(failed).toBe(0);
    // Every run asked for page 1 once: as many mirrors as runs means no tick ran twice.
    expect(registry.mirrorsStarted, workers.flatMap((w) => w.output).join("\n")).toBe(completed);
    const snapshot = readFileSync(join(dataDir, "search", "catalog.ndjson"), "utf8")
      .trim()
      .split("\n");
    expect(snapshot).toHaveLength(300);
    // The first run read every pack's versions; later ones (a run that starts while the first still
    // reads has no earlier pass to go on from, so it is full too) asked only for what changed since.
    const withVersions = snapshot
      .map((l) => JSON.parse(l) as { status?: string; versions?: unknown[] })
      .filter((n) => n.status !== "NodeStatusBanned");
    expect(withVersions.every((n) => Array.isArray(n.versions) && n.versions.length > 0)).toBe(true);
    const firstPages = registry.requests(/^\/nodes$/).filter((q) => q.query.get("page") === "1");
    expect(firstPages[0]!.query.has("timestamp")).toBe(false);
    expect(firstPages.some((q) => q.query.has("timestamp"))).toBe(true);
  }, 120_000);
});
