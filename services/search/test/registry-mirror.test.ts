import { afterEach, describe, expect, it } from "vitest";
import { generateCatalog } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { loadCatalog } from "../src/adapters/catalog-source.ts";

/** Mirror mode against a registry server started here: paging, bounded concurrency and faults. */
const NODES = generateCatalog({ seed: 7, nodes: 1234 });
const fast = { pageSize: 50, retryDelayMs: 10, headersTimeoutMs: 30_000 };
let registry: FakeRegistry | undefined;
const start = async () => (registry = await new FakeRegistry(NODES).start());
afterEach(async () => {
  await registry?.stop();
  registry = undefined;
});

describe("mirroring a registry API", () => {
  it("reads every page once, at most 4 at a time, and yields the nodes in the order it asked for (sort=id)", async () => {
    const r = await start();
    r.delayMs = 20;
    const { records, progress } = await loadCatalog(r.url, { mirror: fast });
    expect(records.map((n) => n.id)).toEqual(NODES.map((n) => n.id).sort());
    expect(progress).toEqual({ read: 1234, indexed: 1234, skipped: 0 });
    expect([...r.pages].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(r.maxInFlight).toBeGreaterThan(1);
    expect(r.maxInFlight).toBeLessThanOrEqual(4);
  });

  it("tries a page that answers 500 again, and the mirror completes", async () => {
    const r = await start();
    r.failPage.set(7, 2);
    const { records } = await loadCatalog(r.url, { mirror: fast });
    expect(records).toHaveLength(1234);
    expect(r.pages.filter((p) => p === 7)).toHaveLength(3);
  });

  it("abandons a page that does not answer in time, tries it again, and completes", async () => {
    const r = await start();
    r.stallPage.set(3, 1);
    // The only short timeout here: every other page answers well within it, page 3's first try never does.
    const { records } = await loadCatalog(r.url, { mirror: { ...fast, headersTimeoutMs: 2000 } });
    expect(records).toHaveLength(1234);
    expect(r.pages.filter((p) => p === 3)).toHaveLength(2);
  });

  it("fails with the page and the reason once a page's tries are spent", async () => {
    const r = await start();
    r.failPage.set(4, 99);
    await expect(loadCatalog(r.url, { mirror: { ...fast, attempts: 3 } })).rejects.toThrow(/page=4.*HTTP 500 \(after 3 tries\)/);
    expect(r.pages.filter((p) => p === 4)).toHaveLength(3);
  });

  it("reports a total that moved during the mirror", async () => {
    const r = await start();
    r.totalDrift = 3;
    const warnings: string[] = [];
    await loadCatalog(r.url, { mirror: fast, onWarning: (w) => warnings.push(w) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/total changed during the read \(1234 → 1237\)/);
  });

  it("says why a registry cannot be reached (refused connection), after its tries", async () => {
    const r = await start();
    const url = r.url;
    await r.stop();
    registry = undefined;
    await expect(loadCatalog(url, { mirror: { ...fast, attempts: 2 } })).rejects.toThrow(/ECONNREFUSED.*after 2 tries/);
  });

  it("stops at once when aborted (shutdown), with no page left in flight", async () => {
    const r = await start();
    r.stallPage.set(1, 99);
    const ctl = new AbortController();
    const loading = loadCatalog(r.url, { mirror: fast, signal: ctl.signal });
    while (r.pages.length === 0) await new Promise((res) => setTimeout(res, 10));
    ctl.abort(new Error("closing"));
    await expect(loading).rejects.toThrow(/closing/);
  });
});
