import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SCRIPTS, startService, type Service } from "@app/testkit/processes";

/**
 * `pnpm start` with no variables: the catalog source is then the public registry. The service
 * must not wait for it: it is ready while the first mirror runs (or, with no network as here,
 * fails and is retried), answers empty pages, and /readyz says so.
 */
const dataDir = mkdtempSync(join(tmpdir(), "default-start-"));
let gateway: Service | undefined;
afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("pnpm start with no variables", () => {
  it("is ready without waiting on the registry, answers empty pages, and /readyz says the catalog is empty and why", async () => {
    // CATALOG_SOURCE "" counts as unset: the default, https://api.comfy.org. Only DATA_DIR is
    // given, so the test leaves nothing in the working tree.
    const t0 = performance.now();
    gateway = await startService(SCRIPTS.gateway, { CATALOG_SOURCE: "", DATA_DIR: dataDir });
    console.log(`[figure] pnpm start with no variables: ready in ${Math.round(performance.now() - t0)} ms (process start included)`);

    const search = await fetch(`${gateway.url}/nodes/search?search=impact`);
    expect(search.status).toBe(200);
    expect(await search.json()).toMatchObject({ nodes: [], total: 0 });

    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; catalog: Record<string, unknown> };
    expect(body.status).toBe("ready");
    expect(body.catalog).toMatchObject({ state: "empty", source: "https://api.comfy.org", indexedAt: null, nodes: 0 });

    const startupWarnings = gateway.output.filter((l) => /catalog empty: serving an empty index/.test(l));
    expect(startupWarnings).toHaveLength(1);
    expect(startupWarnings[0]).toMatch(/first read of https:\/\/api\.comfy\.org runs in the background/);
  }, 120_000);

  it("stops cleanly on SIGTERM while the mirror is failing and being retried", async () => {
    expect(gateway).toBeDefined();
    await gateway!.stop();
    expect(gateway!.child.signalCode === null ? gateway!.child.exitCode : gateway!.child.signalCode).toBe(0);
  }, 30_000);
});
