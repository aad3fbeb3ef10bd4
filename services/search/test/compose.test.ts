import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJobQueue, InProcessJobQueue } from "@app/jobs";
import { loadConfig } from "@app/platform";
import { createReindexHandler, createSearchRuntime, type SearchRuntime } from "../src/internal.ts";
import { waitUntil } from "@app/testkit/processes";
import { childEnv } from "@app/testkit/env";
import { TEST_REDIS_URL } from "@app/testkit/redis";
import { silentLogger } from "./helpers.ts";

const run = promisify(execFile);
const SERVICE_DIR = fileURLToPath(new URL("..", import.meta.url));

let dir: string;
const open: SearchRuntime[] = [];
const deps = async (env: Record<string, string>, role?: "server" | "writer") => {
  const d = await createSearchRuntime(loadConfig({ DATA_DIR: join(dir, "data"), CATALOG_SOURCE: "none", ...env }), silentLogger, { role });
  open.push(d);
  return d;
};
const catalog = async (name: string, ids: string[]) => {
  const path = join(dir, name);
  await writeFile(path, ids.map((id) => JSON.stringify({ id, name: `Pack ${id}`, status: "NodeStatusActive" })).join("\n") + "\n{broken\n");
  return path;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "search-compose-"));
});
afterAll(async () => {
  for (const d of open) await d.close();
  await rm(dir, { recursive: true, force: true });
});

describe("createSearchRuntime (embedded)", () => {
  it("is ready at once with no catalog, and answers an empty page", async () => {
    const d = await deps({ DATA_DIR: join(dir, "empty") });
    await d.started;
    expect(d.isReady()).toBe(true);
    expect(await d.engine.search({ includeBanned: false, offset: 0, limit: 10 })).toEqual({ nodes: [], total: 0 });
  });

  it("indexes CATALOG_SOURCE at start, then restores the index from its snapshot after a restart", async () => {
    const source = await catalog("first.ndjson", ["alpha", "beta"]);
    const first = await deps({ CATALOG_SOURCE: source });
    await first.started;
    expect(first.isReady()).toBe(true);
    expect(await first.engine.count()).toBe(2);
    await first.close();
    await rm(source);

    const second = await deps({});
    await second.started;
    expect(second.isReady()).toBe(true);
    expect((await second.engine.search({ search: "alpha", includeBanned: false, offset: 0, limit: 10 })).nodes.map((n) => n.id)).toEqual([
      "alpha",
    ]);
  });

  it("a reindex written by another process (the CLI, a worker) is picked up by the running server", async () => {
    const server = await deps({});
    await server.started;
    const before = await server.engine.count();
    const writer = await deps({}, "writer");
    const result = await writer.reindex(await catalog("second.ndjson", ["gamma", "delta", "epsilon"]));
    expect(result).toMatchObject({ read: 4, indexed: 3, skipped: 1 });
    expect(await writer.engine.count()).toBe(0); // a writer builds no index of its own
    await waitUntil(async () => (await server.engine.count()) === 3, "the server to swap in the new snapshot");
    expect(before).toBe(2);
    expect((await server.engine.search({ search: "gamma", includeBanned: false, offset: 0, limit: 10 })).total).toBe(1);
  });

  it("runs the catalog.reindex job on a JobQueue and reports progress", async () => {
    const server = await deps({});
    await server.started;
    const queue = new InProcessJobQueue();
    await queue.work({ "catalog.reindex": createReindexHandler(server) });
    const seen: Record<string, unknown>[] = [];
    const source = await catalog("third.ndjson", ["zeta"]);
    // Forced: one node replacing the three indexed by the test before would otherwise be refused.
    const result = await queue.run(
      "catalog.reindex",
      { source, force: true },
      { jobId: "t1", timeoutMs: 30_000, onProgress: (p) => seen.push(p) },
    );
    expect(result).toMatchObject({ read: 2, indexed: 1, skipped: 1 });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen.map((p) => p.phase)).toContain("done");
    expect(await server.engine.count()).toBe(1);
    await queue.close();
  });

  it("a source that cannot be read leaves /readyz at 503 and the process alive", async () => {
    const d = await deps({ DATA_DIR: join(dir, "bad"), CATALOG_SOURCE: join(dir, "does-not-exist.ndjson") });
    await d.started;
    expect(d.isReady()).toBe(false);
  });
});

describe("pnpm reindex (the CLI)", () => {
  it("writes the snapshot under DATA_DIR and prints read, indexed and skipped", async () => {
    const dataDir = join(dir, "cli-data");
    const source = await catalog("cli.ndjson", ["one", "two"]);
    const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli/reindex.ts", "--source", source], {
      cwd: SERVICE_DIR,
      env: childEnv({ DATA_DIR: dataDir, REDIS_URL: "", MEILI_URL: "", CATALOG_SOURCE: "none" }),
    });
    expect(stdout).toMatch(/read 3, indexed 2, skipped 1/);
    const snapshot = await readFile(join(dataDir, "search", "catalog.ndjson"), "utf8");
    expect(
      snapshot
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id),
    ).toEqual(["one", "two"]);
  }, 60_000);

  it("with REDIS_URL it enqueues catalog.reindex, a worker runs it, and the CLI shows the result", async () => {
    const redisUrl = TEST_REDIS_URL;
    const prefix = `search-cli-test-${process.pid}-${Date.now()}`;
    const config = loadConfig({ DATA_DIR: join(dir, "redis-data"), REDIS_URL: redisUrl, QUEUE_PREFIX: prefix, CATALOG_SOURCE: "none" });
    const worker = await createSearchRuntime(config, silentLogger, { role: "writer" });
    open.push(worker);
    const queue = createJobQueue(config);
    await queue.work({ "catalog.reindex": createReindexHandler(worker) });
    try {
      const source = await catalog("redis.ndjson", ["r1", "r2", "r3"]);
      const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli/reindex.ts", "--source", source], {
        cwd: SERVICE_DIR,
        env: childEnv({
          REDIS_URL: redisUrl,
          QUEUE_PREFIX: prefix,
          DATA_DIR: join(dir, "redis-data"),
          MEILI_URL: "",
          CATALOG_SOURCE: "none",
        }),
      });
      expect(stdout).toMatch(/read 4, indexed 3, skipped 1 \(job catalog\.reindex:/);
      const snapshot = await readFile(join(dir, "redis-data", "search", "catalog.ndjson"), "utf8");
      expect(snapshot.trim().split("\n")).toHaveLength(3);
    } finally {
      await queue.close();
    }
  }, 60_000);

  it("without a source it says how to use it and exits 2", async () => {
    const err = await run(process.execPath, ["--import", "tsx", "src/cli/reindex.ts"], {
      cwd: SERVICE_DIR,
      env: childEnv({ CATALOG_SOURCE: "none" }),
    }).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toContain("usage: pnpm reindex --source");
  }, 60_000);
});
