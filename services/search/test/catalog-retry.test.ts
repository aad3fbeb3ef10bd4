import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger, loadConfig, type Logger } from "@app/platform";
import { generateCatalog, writeCatalogFile } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { waitUntil } from "@app/testkit/processes";
import { createSearchRuntime, type SearchRuntime } from "../src/compose.ts";

/** The first run without a network: the retries stop, and what /readyz and the log say then. */
let dir = "";
const open: SearchRuntime[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "catalog-retry-"));
});
afterEach(async () => {
  for (const d of open.splice(0)) await d.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A logger whose info, warn and error lines are kept (level as pino numbers it) instead of printed. */
function capturingLogger(): { logger: Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger("catalog-retry-test", "info");
  for (const [method, level] of [
    ["info", 30],
    ["warn", 40],
    ["error", 50],
  ] as const) {
    vi.spyOn(logger, method).mockImplementation((obj: unknown, msg?: string) => {
      lines.push({ level, msg: typeof obj === "string" ? obj : (msg ?? "") });
    });
  }
  return { logger, lines };
}

/** A registry URL nothing answers at: a fake registry started and stopped again. */
async function unreachableUrl(): Promise<string> {
  const r = await new FakeRegistry([], { seed: 1 }).start();
  const url = r.url;
  await r.stop();
  return url;
}

async function runtime(env: Record<string, string>, logger: Logger): Promise<SearchRuntime> {
  const d = await createSearchRuntime(loadConfig({ LOG_LEVEL: "info", ...env }), logger, {
    mirror: { attempts: 1, retryDelayMs: 1, headersTimeoutMs: 5_000, refreshAttempts: 3, refreshBackoffMs: 1 },
  });
  open.push(d);
  return d;
}

describe("a registry that cannot be reached", () => {
  it("once a refresh's tries are used up, /readyz says when the next try is, the pass reads as failed, and one warning says so", async () => {
    const url = await unreachableUrl();
    const { logger, lines } = capturingLogger();
    const before = Date.now();
    const d = await runtime({ DATA_DIR: join(dir, "offline"), CATALOG_SOURCE: url, CATALOG_REFRESH: "1h" }, logger);
    await d.started;
    await waitUntil(() => d.catalogStatus().nextTry?.retrying === false, "the refresh's tries to be used up");
    const s = d.catalogStatus();
    expect(s).toMatchObject({
      state: "empty",
      source: url,
      nextTry: { retrying: false, failedTries: 3 },
      lastError: expect.stringMatching(/ECONNREFUSED/),
    });
    // The next scheduled refresh, an hour after the schedule began: not "listing" forever.
    const at = Date.parse(s.nextTry!.at!);
    expect(at).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect(s.mirror?.phase ?? "failed").toBe("failed");

    // One warning at start (the catalog is empty), one when the tries are used up; each failed try before it at info.
    const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^catalog empty: serving an empty index/);
    expect(warnings[1]).toMatch(/could not be read \(3 tries\); serving an empty index; next try at .*CATALOG_SOURCE=/);
    expect(lines.filter((l) => l.msg === "catalog read failed; trying again")).toHaveLength(2);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it("with no refresh scheduled, says no further try comes until a restart", async () => {
    const url = await unreachableUrl();
    const { logger } = capturingLogger();
    const d = await runtime({ DATA_DIR: join(dir, "no-refresh"), CATALOG_SOURCE: url, CATALOG_REFRESH: "0s" }, logger);
    await waitUntil(() => d.catalogStatus().nextTry?.retrying === false, "the tries to be used up");
    expect(d.catalogStatus().nextTry).toEqual({ at: null, retrying: false, failedTries: 3 });
  });
});

describe("a restart after a run from a local file", () => {
  it("credits the snapshot's packs to the file they came from, and names the registry it reads next", async () => {
    const file = join(dir, "local.ndjson");
    writeCatalogFile(file, generateCatalog({ seed: 3, nodes: 40 }));
    const dataDir = join(dir, "from-file");
    const first = await runtime({ DATA_DIR: dataDir, CATALOG_SOURCE: file }, capturingLogger().logger);
    await first.started;
    const nodes = first.catalogStatus().nodes;
    expect(first.catalogStatus()).toMatchObject({ state: "fresh", source: file });
    await first.close();
    open.splice(open.indexOf(first), 1);

    const url = await unreachableUrl();
    const again = await runtime({ DATA_DIR: dataDir, CATALOG_SOURCE: url }, capturingLogger().logger);
    await again.started;
    expect(again.catalogStatus()).toMatchObject({ state: "stale", nodes, source: file, readingFrom: url });
  });
});
