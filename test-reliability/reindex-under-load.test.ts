import { readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { record } from "@app/testkit/figures";
import { runScript, SCRIPTS, startService, tempDir, type Service } from "@app/testkit/processes";
import { testCatalog } from "@app/testkit/catalog";

/**
 * Searches at full speed through the gateway while `pnpm reindex` swaps the real catalog in
 * (the old index: a 200-node slice of it). Zero failed requests, and every answer's total is
 * the old index's or the new one's, never something in between.
 */
let dir: string;
let gw: Service;
const QUERIES = ["/nodes/search", "/nodes/search?search=comfyui", "/nodes/search?search=impact%20pack&limit=5", "/nodes?page=3&limit=20"];
const IN_FLIGHT = 32;

beforeAll(async () => {
  dir = await tempDir("reindex");
  const fixture = join(dir, "old.ndjson");
  // 200 active packs (the generated fixture also holds banned and deleted ones, which no search answers).
  const active = activeLines();
  writeFileSync(fixture, active.slice(0, 200).join("\n") + "\n");
  gw = await startService(SCRIPTS.gateway, { DATA_DIR: join(dir, "data"), CATALOG_SOURCE: fixture, API_KEYS: "unused-key-0123456789" });
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

const activeLines = (): string[] =>
  readFileSync(testCatalog().path, "utf8")
    .split("\n")
    .filter((l) => l.includes('"NodeStatusActive"'));

async function total(path: string): Promise<number> {
  const res = await fetch(gw.url + path);
  expect(res.status).toBe(200);
  return ((await res.json()) as { total: number }).total;
}

describe("reindex under load", () => {
  it("the real catalog swaps in while searches run: no failure, every answer from the old or the new index", async () => {
    const oldTotals = await Promise.all(QUERIES.map(total));
    expect(oldTotals[0]).toBe(200);

    const seen = QUERIES.map(() => new Map<number, number>());
    let requests = 0;
    const failures: string[] = [];
    let stop = false;
    const started = performance.now();
    const deadline = Date.now() + 180_000;
    const workers = Array.from({ length: IN_FLIGHT }, async (_, w) => {
      for (let n = 0; !stop && Date.now() < deadline && n < 50_000; n++) {
        const q = (w + n) % QUERIES.length;
        try {
          const res = await fetch(gw.url + QUERIES[q]!);
          const text = await res.text();
          requests++;
          if (res.status !== 200) {
            failures.push(`${res.status} ${text.slice(0, 200)}`);
            continue;
          }
          const t = (JSON.parse(text) as { total: number }).total;
          seen[q]!.set(t, (seen[q]!.get(t) ?? 0) + 1);
        } catch (err) {
          requests++;
          failures.push(String(err));
        }
      }
    });

    const cli = await runScript(SCRIPTS.reindex, ["--source", testCatalog().path], { DATA_DIR: join(dir, "data") });
    expect(cli.code, cli.stderr).toBe(0);
    const reindexSeconds = (performance.now() - started) / 1000;
    // The server notices the new snapshot (polled) and rebuilds: keep the load on until it serves it, and a while after.
    while (Date.now() < deadline && (seen[0]!.size < 2 || [...seen[0]!.keys()].every((t) => t === oldTotals[0]))) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const swappedAt = (performance.now() - started) / 1000;
    const requestsAtSwap = requests;
    while (Date.now() < deadline && requests < requestsAtSwap + 2000) await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await Promise.all(workers);
    const seconds = (performance.now() - started) / 1000;

    const newTotals = await Promise.all(QUERIES.map(total));
    expect(failures.slice(0, 5), `${failures.length} of ${requests} requests failed`).toEqual([]);
    // Every active pack of the whole catalog (the real one: 5,892; the generated fixture: fewer).
    expect(newTotals[0]).toBe(activeLines().length);
    QUERIES.forEach((q, i) => {
      const totals = [...seen[i]!.keys()];
      for (const t of totals) expect([oldTotals[i], newTotals[i]], `${q} answered total ${t}`).toContain(t);
    });
    // Both indexes really served under load.
    expect(seen[0]!.get(oldTotals[0]!)).toBeGreaterThan(0);
    expect(seen[0]!.get(newTotals[0]!)).toBeGreaterThan(0);
    record("reindex-under-load", {
      requests,
      inFlight: IN_FLIGHT,
      failed: 0,
      seconds: +seconds.toFixed(1),
      requestsPerSecond: Math.round(requests / seconds),
      oldTotal: oldTotals[0],
      newTotal: newTotals[0],
      cliSeconds: +reindexSeconds.toFixed(1),
      servedNewIndexAfterSeconds: +swappedAt.toFixed(1),
      answersFromOld: seen[0]!.get(oldTotals[0]!),
      answersFromNew: seen[0]!.get(newTotals[0]!),
    });
  });
});
