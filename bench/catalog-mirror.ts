import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@app/platform";
import { createSearchRuntime, loadCatalog } from "@app/search/internal";
import { fixtureCatalog, generateCatalog, testCatalog, writeCatalogFile, type RegistryNode } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { SCRIPTS, startService } from "@app/testkit/processes";
import { median } from "./lib/http-load.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

export interface CatalogMirrorFigures {
  catalog: string;
  /** Gateway process start to /readyz 200 with the default source (the public registry, unreachable here) vs CATALOG_SOURCE=none. */
  readyMs: { registryDefault: number; noneBaseline: number; ratio: number };
  /** Reading a 6k-node registry over HTTP (100 a page) vs the same nodes from an NDJSON file. */
  mirrorMs: { concurrency4: number; concurrency1: number; fileBaseline: number; ratioToFile: number; speedupVsSequential: number };
  /** One refresh of a serving index (read, build, swap, snapshot) vs the first read into an empty one. */
  refresh: { firstMs: number; refreshMs: number; refreshCpuMs: number; ratio: number };
  /** The whole mirror (list, every pack's versions and classes) and its refreshes, against a registry answering in 50 ms. */
  passes: MirrorPassFigures;
  figures: Figure[];
  summary: string[];
}

interface Pass {
  ms: number;
  requests: number;
}

export interface MirrorPassFigures {
  catalog: string;
  /** The pack list alone (no versions, no classes): the baseline. */
  listOnly: Pass;
  /** The first mirror one pack at a time: list, then each pack's versions and classes (8 at a time). */
  fullFirstPerPack: Pass;
  /** The first mirror: list, every version from the registry's list of them (`/versions`), then each pack's classes. */
  fullFirst: Pass;
  /** A refresh where nothing changed (timestamp=). */
  refreshUnchanged: Pass;
  /** A refresh after 10 packs published a new version with a new class. */
  refreshTenChanged: Pass;
  /** A full pass over the same catalog (the daily one), for comparison with the refreshes. */
  fullAgain: Pass;
}

const round = (x: number) => Math.round(x);
const seconds = (ms: number) => Math.round(ms / 100) / 10;

function passFigures(p: MirrorPassFigures): Figure[] {
  return [
    figure("first mirror of the catalog (list, versions, classes) at 50 ms a request", seconds(p.fullFirst.ms), "s", {
      baseline: ["each pack's versions asked one by one", seconds(p.fullFirstPerPack.ms)],
      goal: "< 60 s",
    }),
    figure("refresh where nothing changed", seconds(p.refreshUnchanged.ms), "s", { baseline: ["a full pass", seconds(p.fullAgain.ms)] }),
  ];
}

const passSummary = (p: MirrorPassFigures) =>
  `catalog mirror: first mirror ${seconds(p.fullFirst.ms)} s, ${p.fullFirst.requests} requests (one pack at a time: ${seconds(p.fullFirstPerPack.ms)} s, ${p.fullFirstPerPack.requests}); refresh unchanged ${seconds(p.refreshUnchanged.ms)} s, ten changed ${seconds(p.refreshTenChanged.ms)} s`;

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
/** The whole mirror and its refreshes, on the real catalog when it is beside the repository (else the fixture). */
async function mirrorPasses(delayMs: number): Promise<MirrorPassFigures> {
  const cat = testCatalog();
  const nodes = readFileSync(cat.path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as RegistryNode);
  const registry = await new FakeRegistry(nodes).start();
  registry.delayMs = delayMs;
  const dir = mkdtempSync(join(tmpdir(), "bench-passes-"));
  const pass = async (fn: () => Promise<unknown>): Promise<Pass> => {
    const before = registry.log.length;
    const t0 = performance.now();
    await fn();
    return { ms: round(performance.now() - t0), requests: registry.log.length - before };
  };
  try {
    const listOnly = await pass(() => loadCatalog(registry.url));
    // The per-pack mirror, in the same run: every pack's versions asked one by one.
    const perPack = await createSearchRuntime(
      loadConfig({ DATA_DIR: join(dir, "per-pack"), CATALOG_SOURCE: "none" }),
      createLogger("bench", "silent"),
      { mirror: { bulkVersionsFrom: Number.POSITIVE_INFINITY } },
    );
    await perPack.started;
    const fullFirstPerPack = await pass(() => perPack.reindex(registry.url));
    await perPack.close();
    const deps = await createSearchRuntime(
      loadConfig({ DATA_DIR: join(dir, "data"), CATALOG_SOURCE: "none" }),
      createLogger("bench", "silent"),
    );
    await deps.started;
    const fullFirst = await pass(() => deps.reindex(registry.url));
    const refreshUnchanged = await pass(() => deps.reindex(registry.url));
    const active = nodes.filter((n) => n.status === "NodeStatusActive").slice(0, 10);
    active.forEach((n, i) => registry.publish(n.id, "99.0.0", [`BenchChangedClass${i}`]));
    const refreshTenChanged = await pass(() => deps.reindex(registry.url));
    const fullAgain = await pass(() => deps.reindex(registry.url, { full: true }));
    await deps.close();
    const figures = {
      catalog: `${cat.description}, served by the testkit's fake registry answering every request after ${delayMs} ms`,
      listOnly,
      fullFirstPerPack,
      fullFirst,
      refreshUnchanged,
      refreshTenChanged,
      fullAgain,
    };
    console.log(JSON.stringify(figures, null, 2));
    return figures;
  } finally {
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(
  opts = { readyRuns: 5, mirrorRuns: 3, passesOnly: testEnv.MIRROR_PASSES_ONLY },
): Promise<CatalogMirrorFigures | { passes: MirrorPassFigures; figures: Figure[]; summary: string[] }> {
  if (opts.passesOnly) {
    const passes = await mirrorPasses(50);
    return { passes, figures: passFigures(passes), summary: [passSummary(passes)] };
  }
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

    const deps = await createSearchRuntime(
      loadConfig({ DATA_DIR: join(dir, "data"), CATALOG_SOURCE: "none" }),
      createLogger("bench", "silent"),
    );
    await deps.started;
    const firstMs = await timed(() => deps.reindex(registry.url), 1);
    const cpu0 = process.cpuUsage();
    const refreshMs = await timed(() => deps.reindex(registry.url, { full: true }), 1);
    const cpu = process.cpuUsage(cpu0);
    await deps.close();
    const passes = await mirrorPasses(pageDelayMs);
    return {
      catalog,
      readyMs: {
        registryDefault: round(registryDefault),
        noneBaseline: round(noneBaseline),
        ratio: Math.round((registryDefault / noneBaseline) * 100) / 100,
      },
      mirrorMs: {
        concurrency4: round(concurrency4),
        concurrency1: round(concurrency1),
        fileBaseline: round(fileBaseline),
        ratioToFile: Math.round((concurrency4 / fileBaseline) * 10) / 10,
        speedupVsSequential: Math.round((concurrency1 / concurrency4) * 100) / 100,
      },
      refresh: {
        firstMs: round(firstMs),
        refreshMs: round(refreshMs),
        refreshCpuMs: round((cpu.user + cpu.system) / 1000),
        ratio: Math.round((refreshMs / firstMs) * 100) / 100,
      },
      passes,
      figures: [
        figure("gateway start to /readyz 200, default source (registry unreachable)", seconds(registryDefault), "s", {
          baseline: ["CATALOG_SOURCE=none", seconds(noneBaseline)],
        }),
        figure(`mirror ${nodes.length.toLocaleString("en")} nodes, 4 pages in flight`, seconds(concurrency4), "s", {
          baseline: ["one page at a time", seconds(concurrency1)],
        }),
        figure("refresh of a serving index", seconds(refreshMs), "s", { baseline: ["first read into an empty index", seconds(firstMs)] }),
        ...passFigures(passes),
      ],
      summary: [passSummary(passes)],
    };
  } finally {
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runWhenMain(import.meta.url, () => run());
