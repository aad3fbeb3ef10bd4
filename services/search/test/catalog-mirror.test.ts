import request from "supertest";
import { describe, expect, it } from "vitest";
import { generateCatalog } from "@app/testkit/catalog";
import { runScript, SCRIPTS, waitUntil } from "@app/testkit/processes";
import { createApp } from "../src/app.ts";
import { mirrorHarness } from "./helpers.ts";

/** The search service keeping a registry mirrored: background start, refresh, refusal, --force. */
const NODES = generateCatalog({ seed: 11, nodes: 600 });
const harness = mirrorHarness("search-mirror", { pageSize: 50, retryDelayMs: 10, headersTimeoutMs: 30_000 });
const deps = (env: Record<string, string>) => harness.deps(env);
const registry = (nodes = NODES) => harness.registry(nodes);
const until = waitUntil;

describe("a registry source", () => {
  it("is ready before the registry answers, says the catalog is empty and why, and closes at once", async () => {
    const r = await registry();
    r.stallPage.set(1, 99);
    const d = await deps({ DATA_DIR: harness.path("stalled"), CATALOG_SOURCE: r.url });
    await d.started;
    expect(d.isReady()).toBe(true);
    const res = await request(createApp(d)).get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body.catalog).toMatchObject({ state: "empty", source: r.url, indexedAt: null, nodes: 0, lastError: null, missing: null });
    expect((await request(createApp(d)).get("/nodes/search")).body).toMatchObject({ nodes: [], total: 0 });
    await until(() => r.pages.length > 0, "the first page to be asked for");
  });

  it("an unreachable registry leaves the service ready and empty, with the reason in lastError", async () => {
    const r = await registry();
    const url = r.url;
    await r.stop();
    const d = await deps({ DATA_DIR: harness.path("unreachable"), CATALOG_SOURCE: url });
    await d.started;
    expect(d.isReady()).toBe(true);
    await until(() => d.catalogStatus().lastError !== null, "the first failure to be reported");
    expect(d.catalogStatus()).toMatchObject({ state: "empty", nodes: 0, lastError: expect.stringMatching(/ECONNREFUSED/) });
  });

  it("mirrors in the background, serves it as fresh, and a restart serves the snapshot as stale until the next read", async () => {
    const r = await registry();
    const dataDir = harness.path("mirror");
    const d = await deps({ DATA_DIR: dataDir, CATALOG_SOURCE: r.url });
    await until(() => d.catalogStatus().state === "fresh", "the first mirror");
    expect(d.catalogStatus()).toMatchObject({ source: r.url, nodes: 600, lastError: null });
    const page = await request(createApp(d)).get("/nodes/search?limit=100");
    expect(page.body.total).toBe(NODES.filter((n) => n.status === "NodeStatusActive").length);
    await d.close();

    r.stallPage.set(1, 99);
    const again = await deps({ DATA_DIR: dataDir, CATALOG_SOURCE: r.url });
    await again.started;
    expect(again.catalogStatus()).toMatchObject({ state: "stale", nodes: 600, source: r.url, lastError: null });
    expect(again.catalogStatus().indexedAt).toEqual(expect.any(String));
  });

  it("refreshes every CATALOG_REFRESH, refuses a catalog that shrank by more than half, and keeps serving the old one", async () => {
    const r = await registry();
    // Every refresh a full pass: only a full pass sees packs that are gone.
    const d = await deps({
      DATA_DIR: harness.path("refresh"),
      CATALOG_SOURCE: r.url,
      CATALOG_REFRESH: "300ms",
      CATALOG_FULL_REFRESH: "0s",
    });
    await until(() => r.mirrorsStarted >= 2 && d.catalogStatus().state === "fresh", "a second mirror");
    r.nodes = NODES.slice(0, 100);
    // A mirror under way at the switch reads pages of both (its moving total is reported, not
    // restarted): it lands if it kept half of the 600, and 100 is less than half of either.
    await until(
      () => /refused the catalog .*: 100 nodes, less than half/.test(d.catalogStatus().lastError ?? ""),
      "the shrunken catalog to be refused",
    );
    const kept = d.catalogStatus();
    expect(kept).toMatchObject({
      state: "stale",
      lastError: expect.stringMatching(new RegExp(`100 nodes, less than half of the ${kept.nodes} indexed`)),
    });
    expect(kept.nodes).toBeGreaterThanOrEqual(300);
    const served = await d.engine.count();
    const tick = r.mirrorsStarted;
    await until(() => r.mirrorsStarted >= tick + 2, "two more refreshes");
    expect(d.catalogStatus()).toMatchObject({ state: "stale", nodes: kept.nodes });
    expect(await d.engine.count()).toBe(served);
    r.nodes = NODES.slice(0, 400); // shrank, but by less than half: taken
    await until(() => d.catalogStatus().nodes === 400, "a smaller but plausible catalog");
    expect(d.catalogStatus()).toMatchObject({ state: "fresh", lastError: null });
  });

  it("CATALOG_REFRESH=off reads once", async () => {
    const r = await registry();
    const d = await deps({ DATA_DIR: harness.path("once"), CATALOG_SOURCE: r.url, CATALOG_REFRESH: "off" });
    await until(() => d.catalogStatus().state === "fresh", "the one read");
    expect(r.mirrorsStarted).toBe(1);
  });
});

describe("pnpm reindex against a registry", () => {
  it("refuses a catalog less than half the indexed one, and --force swaps it in", async () => {
    const r = await registry();
    const env = { DATA_DIR: harness.path("cli"), LOG_LEVEL: "silent" };
    expect((await runScript(SCRIPTS.reindex, ["--source", r.url], env)).code).toBe(0);
    r.nodes = NODES.slice(0, 100);
    const refused = await runScript(SCRIPTS.reindex, ["--source", r.url], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the catalog read from .*: 100 nodes, less than half of the 600 indexed.*--force/);
    const forced = await runScript(SCRIPTS.reindex, ["--source", r.url, "--force"], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/read 100, indexed 100, skipped 0/);
  }, 120_000);
});
