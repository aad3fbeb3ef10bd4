import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@app/platform";
import { createSearchDeps, loadCatalog } from "@app/search";
import { fixtureCatalog, generateCatalog, writeCatalogFile } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { SCRIPTS, startService } from "@app/testkit/processes";
import { median } from "./lib/http-load.ts";

export interface CatalogMirrorFigures {
  catalog: string;
  /** Gateway process start to /readyz 200 with the default source (the public registry, unreachable here) vs CATALOG_SOURCE=none. */
  readyMs: { registryDefault: number; noneBaseline: number; ratio: number };
  /** Reading a 6k-node registry over HTTP (100 a page) vs the same nodes from an NDJSON file. */
  mirrorMs: { concurrency4: number; concurrency1: number; fileBaseline: number; ratioToFile: number; speedupVsSequential: number };
  /** One refresh of a serving index (read, build, swap, snapshot) vs the first read into an empty one. */
  refresh: { firstMs: number; refreshMs: number; refreshCpuMs: number; ratio: number };
}

const round = (x: number) => Math.round(x);

async function timeToReady(env: Record<string, string>): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-ready-"));
  const t0 = performance.now();
  const svc = await startService(SCRIPTS.gateway, { ...env, DATA_DIR: dataDir });
  const ms = performance.now() - t0;
  await svc.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return ms;
}

async function timed(fn: () => Promise<unknown>, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/**
 * How long the service takes to be ready when its catalog is a registry it cannot reach, how
 * long a 6k-node mirror takes, and what a refresh costs. Each against a baseline of the same run.
 */
export async function run(opts = { readyRuns: 5, mirrorRuns: 3 }): Promise<CatalogMirrorFigures> {
  const nodes = [...fixtureCatalog(), ...generateCatalog({ seed: 99, nodes: 2000 })].slice(0, 6000);
  const pageDelayMs = 50;
  const catalog = `a fake registry on loopback serving ${nodes.length} generated nodes (testkit fixture), 100 a page, each page answered after ${pageDelayMs} ms as across the internet`;
  console.log(`catalog: ${catalog}`);

  // Alternating rounds, medians: whatever else the machine does weighs on both alike.
  const ready: { registry: number[]; none: number[] } = { registry: [], none: [] };
  for (let i = 0; i < opts.readyRuns; i++) {
    ready.registry.push(await timeToReady({ CATALOG_SOURCE: "" }));
    ready.none.push(await timeToReady({ CATALOG_SOURCE: "none" }));
  }
  const registryDefault = median(ready.registry);
  const noneBaseline = median(ready.none);

  const registry = await new FakeRegistry(nodes).start();
  registry.delayMs = pageDelayMs;
  const dir = mkdtempSync(join(tmpdir(), "bench-mirror-"));
  try {
    const file = join(dir, "nodes.ndjson");
    writeCatalogFile(file, nodes);
    const concurrency4 = await timed(() => loadCatalog(registry.url, { mirror: { concurrency: 4 } }), opts.mirrorRuns);
    const concurrency1 = await timed(() => loadCatalog(registry.url, { mirror: { concurrency: 1 } }), opts.mirrorRuns);
    const fileBaseline = await timed(() => loadCatalog(file), opts.mirrorRuns);

    const deps = await createSearchDeps(loadConfig({ DATA_DIR: join(dir, "data"), CATALOG_SOURCE: "none" }), createLogger("bench", "silent"));
    await deps.started;
    const firstMs = await timed(() => deps.reindex(registry.url), 1);
    const cpu0 = process.cpuUsage();
    const refreshMs = await timed(() => deps.reindex(registry.url), 1);
    const cpu = process.cpuUsage(cpu0);
    await deps.close();
    return {
      catalog,
      readyMs: { registryDefault: round(registryDefault), noneBaseline: round(noneBaseline), ratio: Math.round((registryDefault / noneBaseline) * 100) / 100 },
      mirrorMs: {
        concurrency4: round(concurrency4),
        concurrency1: round(concurrency1),
        fileBaseline: round(fileBaseline),
        ratioToFile: Math.round((concurrency4 / fileBaseline) * 10) / 10,
        speedupVsSequential: Math.round((concurrency1 / concurrency4) * 100) / 100,
      },
      refresh: { firstMs: round(firstMs), refreshMs: round(refreshMs), refreshCpuMs: round((cpu.user + cpu.system) / 1000), ratio: Math.round((refreshMs / firstMs) * 100) / 100 },
    };
  } finally {
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
