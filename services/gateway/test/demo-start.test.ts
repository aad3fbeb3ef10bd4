import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { archiveBytes, DEMO_UPSTREAM, demoCatalog } from "@app/demo-catalog";
import { SCRIPTS, startService, type Service } from "@app/testkit/processes";

/**
 * The README's offline command, `CATALOG_SOURCE=demo pnpm start`: no network and no ../shared,
 * yet every page has versions and each installs, from the archives the demo lays out itself.
 */
const dataDir = mkdtempSync(join(tmpdir(), "demo-start-"));
let gateway: Service | undefined;
afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const DEMO = demoCatalog().filter((n) => n.status !== "NodeStatusDeleted");

describe("CATALOG_SOURCE=demo", () => {
  it("is the README's offline command", () => {
    const readme = readFileSync(join(import.meta.dirname, "../../../README.md"), "utf8");
    expect(readme).toContain("CATALOG_SOURCE=demo API_KEYS=dev-key pnpm start");
  });

  it("serves the demo catalog, every active pack with an installable version whose archive this instance serves", async () => {
    gateway = await startService(
      SCRIPTS.gateway,
      { CATALOG_SOURCE: "demo", DATA_DIR: dataDir, API_KEYS: "dev-key" },
      { timeoutMs: 120_000 },
    );
    const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { catalog: { state: string; nodes: number; source: string } };
    expect(ready.catalog).toMatchObject({ state: "fresh", nodes: demoCatalog().length });
    expect(ready.catalog.source).toMatch(/demo-catalog\.ndjson$/);

    const list = (await (await fetch(`${gateway.url}/nodes?limit=100`)).json()) as { total: number };
    expect(list.total).toBe(DEMO.filter((n) => n.status === "NodeStatusActive").length);

    const active = DEMO.filter((n) => n.status === "NodeStatusActive");
    for (const [i, pack] of active.entries()) {
      const versions = (await (await fetch(`${gateway.url}/nodes/${pack.id}/versions`)).json()) as {
        version: string;
        downloadUrl: string;
      }[];
      expect(versions.length, pack.id).toBeGreaterThanOrEqual(1);
      const install = (await (await fetch(`${gateway.url}/nodes/${pack.id}/install`)).json()) as { version: string; downloadUrl: string };
      // This instance's own archive route, never the demo's placeholder upstream.
      expect(install.downloadUrl.startsWith(`${gateway.url}/archives/`), install.downloadUrl).toBe(true);
      expect(install.downloadUrl).not.toContain(new URL(DEMO_UPSTREAM).host);
      if (i % 25 !== 0) continue;
      const zip = await fetch(install.downloadUrl);
      expect(zip.status).toBe(200);
      expect(Buffer.from(await zip.arrayBuffer()).equals(archiveBytes(pack.id, install.version))).toBe(true);
    }
  }, 180_000);
});
