import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig, type Config } from "@app/platform";
import { archiveBytes, archiveReprDigest } from "@app/testkit/fake-archives";
import { comfyNodeDefinition } from "@app/testkit/fake-registry-lists";
import type { RegistryNode } from "@app/testkit/catalog";
import { runScript, waitUntil } from "@app/testkit/processes";
import { createApp } from "../src/app.ts";
import { catalogVersionOf, createArchiveService, type ArchiveService } from "../src/adapters/archives/archive-service.ts";
import { importedCatalogSource } from "../src/adapters/bundle/bundle-source.ts";
import { versionClassesDir } from "../src/adapters/registry/version-classes.ts";
import { createSearchRuntime, type SearchRuntime } from "../src/compose.ts";
import { mirrorHarness, silentLogger } from "./helpers.ts";

/**
 * `pnpm mirror export` writes a running mirror's catalog and archives to one
 * tar; a fresh instance started with CATALOG_SOURCE=<bundle.tar> and no upstream at all answers the
 * same installs with the same bytes, and the classes of other versions the mirror had kept; a newer
 * bundle replaces the catalog and adds archives.
 */
const v = (version: string, status: string, createdAt: string) => ({ version, status, createdAt });
const PACKS: RegistryNode[] = [
  {
    id: "alpha-pack",
    name: "Alpha",
    status: "NodeStatusActive",
    app_node_names: ["AlphaNode"],
    versions: [
      v("1.1.0", "NodeVersionStatusActive", "2024-05-01T00:00:00Z"),
      { ...v("1.0.0", "NodeVersionStatusActive", "2024-03-01T00:00:00Z"), classes: ["AlphaOldNode", "AlphaOlderNode"] },
    ],
  },
  {
    id: "beta-pack",
    name: "Beta",
    status: "NodeStatusActive",
    versions: [
      v("2.0.0", "NodeVersionStatusBanned", "2024-06-01T00:00:00Z"),
      v("1.9.0", "NodeVersionStatusActive", "2024-04-01T00:00:00Z"),
    ],
  },
  {
    id: "delta-pack",
    name: "Delta",
    status: "NodeStatusActive",
    versions: [
      v("0.3.0", "NodeVersionStatusPending", "2024-07-01T00:00:00Z"),
      v("0.2.0", "NodeVersionStatusActive", "2024-02-01T00:00:00Z"),
      v("0.1.0", "NodeVersionStatusActive", "2024-01-01T00:00:00Z"),
    ],
  },
];
const harness = mirrorHarness("search-bundle", { pageSize: 25, retryDelayMs: 10, headersTimeoutMs: 30_000 });
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

interface Instance {
  config: Config;
  runtime: SearchRuntime;
  archives: ArchiveService;
  app: ReturnType<typeof createApp>;
}

/** A search service as main.ts composes it: the bundle imported first, then the runtime and the archives. */
async function start(env: Record<string, string>): Promise<Instance> {
  const config = loadConfig({ LOG_LEVEL: "silent", CATALOG_REFRESH: "off", ARCHIVE_TIMEOUT_MS: "2000", ...env });
  const source = await importedCatalogSource(config, silentLogger);
  const runtime = await createSearchRuntime(config, silentLogger, { mirror: { pageSize: 25, retryDelayMs: 10 }, source });
  closing.push(runtime);
  const archives = await createArchiveService(config, silentLogger, {
    engine: runtime.engine,
    catalogVersion: () => catalogVersionOf(runtime.catalogStatus()),
    prefetch: { pollMs: 50, retryDelayMs: 10 },
  });
  closing.push(archives);
  await runtime.started;
  return { config, runtime, archives, app: createApp({ ...runtime, archives }) };
}

const binary = (app: Instance["app"], path: string) =>
  request(app)
    .get(path)
    .set("host", "mirror.lan")
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => done(null, Buffer.concat(chunks)));
    });
const json = async (app: Instance["app"], path: string) => (await request(app).get(path).set("host", "mirror.lan")).body;
const exportWith = (dataDir: string, out: string) => runScript("services/search/src/cli/mirror.ts", ["export", out], { DATA_DIR: dataDir });

describe("a bundle carried into a network with no way out", () => {
  it("export while the mirror runs, import on a fresh DATA_DIR with upstream stopped: the same catalog, installs and bytes", async () => {
    const registry = await harness.registry(PACKS);
    const mirror = await start({ DATA_DIR: harness.path("mirror"), CATALOG_SOURCE: registry.url, MIRROR_ARCHIVES: "all" });
    const servable = [
      ["alpha-pack", "1.1.0"],
      ["alpha-pack", "1.0.0"],
      ["beta-pack", "1.9.0"],
      ["delta-pack", "0.3.0"],
      ["delta-pack", "0.2.0"],
      ["delta-pack", "0.1.0"],
    ] as const;
    await waitUntil(
      () => mirror.runtime.catalogStatus().mirror?.phase === "done" && mirror.archives.status().stored === servable.length,
      "the mirror and its archives",
      { tries: 1200 },
    );

    // A version other than the install path's, read through on the mirror and kept there.
    const older = "/nodes/alpha-pack/versions/1.0.0/comfy-nodes";
    const olderClasses = await json(mirror.app, older);
    expect(olderClasses).toEqual({
      comfy_nodes: [comfyNodeDefinition("AlphaOldNode"), comfyNodeDefinition("AlphaOlderNode")],
      totalNumberOfPages: 1,
    });
    expect(olderClasses.comfy_nodes[0].input_types).toBeTruthy();
    // A file kept before kept files named their version (the classes alone, named by the hash of "id@version").
    const keptBefore = [comfyNodeDefinition("DeltaOldNode")];
    writeFileSync(
      join(versionClassesDir(harness.path("mirror")), `${createHash("sha256").update("delta-pack@0.1.0").digest("hex")}.json`),
      JSON.stringify(keptBefore),
    );

    const bundle = harness.path("mirror-1.tar");
    const exported = await exportWith(harness.path("mirror"), bundle);
    expect(exported.stderr).not.toMatch(/failed/);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({
      nodes: PACKS.length,
      archives: servable.length,
      versionClasses: 2,
      source: registry.url,
    });
    await registry.stop();

    const airGapped = await start({ DATA_DIR: harness.path("air-gapped"), CATALOG_SOURCE: bundle });
    expect(airGapped.runtime.isReady()).toBe(true);
    expect(airGapped.runtime.catalogStatus()).toMatchObject({ state: "fresh", nodes: PACKS.length });
    for (const path of [
      "/nodes?limit=50",
      "/nodes/alpha-pack",
      "/nodes/alpha-pack/install",
      "/nodes/delta-pack/install",
      "/nodes/beta-pack/versions",
      "/nodes/alpha-pack/versions/latest/comfy-nodes",
      "/nodes/delta-pack/install?version=0.1.0",
    ]) {
      expect(await json(airGapped.app, path), path).toEqual(await json(mirror.app, path));
    }
    expect(await json(airGapped.app, older)).toEqual(olderClasses);
    expect(await json(airGapped.app, `${older}?limit=1&page=2`)).toEqual({
      comfy_nodes: [comfyNodeDefinition("AlphaOlderNode")],
      totalNumberOfPages: 2,
    });
    expect((await json(airGapped.app, "/nodes/delta-pack/versions/0.1.0/comfy-nodes")).comfy_nodes).toEqual(keptBefore);
    // A version the mirror never kept: a 404 naming it, asked of nobody.
    const neverKept = await request(airGapped.app).get("/nodes/delta-pack/versions/0.2.0/comfy-nodes");
    expect(neverKept.status).toBe(404);
    expect(neverKept.body.message).toContain("0.2.0");
    for (const [id, version] of servable) {
      const install = await json(airGapped.app, `/nodes/${id}/install?version=${version}`);
      expect(install.downloadUrl).toBe(`http://mirror.lan/archives/${id}/${version}/node.zip`);
      const res = await binary(airGapped.app, `/archives/${id}/${version}/node.zip`);
      expect(res.status, `${id} ${version}`).toBe(200);
      expect(res.headers["repr-digest"]).toBe(archiveReprDigest(id, version));
      expect(Buffer.compare(res.body, archiveBytes(id, version))).toBe(0);
    }
    expect((await request(airGapped.app).get("/archives/beta-pack/2.0.0/node.zip")).status).toBe(403);
  });

  it("a newer bundle over an older one replaces the catalog and adds archives; a bundle that cannot be read stops the start with its path", async () => {
    const registry = await harness.registry(PACKS);
    const mirror = await start({
      DATA_DIR: harness.path("growing"),
      CATALOG_SOURCE: registry.url,
      MIRROR_ARCHIVES: "latest",
      CATALOG_FULL_REFRESH: "0s",
    });
    await waitUntil(
      () => mirror.runtime.catalogStatus().mirror?.phase === "done" && mirror.archives.status().stored === 3,
      "the first pass",
      { tries: 1200 },
    );
    const older = harness.path("older.tar");
    expect((await exportWith(harness.path("growing"), older)).code).toBe(0);

    registry.publish("alpha-pack", "1.2.0", ["AlphaNode", "AlphaNodeTwo"]);
    await mirror.runtime.reindex(registry.url, { full: true });
    await waitUntil(
      () => mirror.archives.status().stored === 3 && mirror.archives.status().total === 3 && !!mirror.archives.store.index,
      "the new install-path archive",
      { tries: 1200 },
    );
    await waitUntil(async () => !!(await mirror.archives.store.stored("alpha-pack", "1.2.0")), "alpha 1.2.0 stored", { tries: 1200 });
    const newer = harness.path("newer.tar");
    expect((await exportWith(harness.path("growing"), newer)).code).toBe(0);
    await registry.stop();

    const dataDir = harness.path("carried");
    const first = await start({ DATA_DIR: dataDir, CATALOG_SOURCE: older });
    expect((await json(first.app, "/nodes/alpha-pack/install")).version).toBe("1.1.0");
    expect((await request(first.app).get("/archives/alpha-pack/1.2.0/node.zip")).status).toBe(404);
    for (const c of closing.splice(0).reverse()) await c.close();

    const second = await start({ DATA_DIR: dataDir, CATALOG_SOURCE: newer });
    expect((await json(second.app, "/nodes/alpha-pack/install")).version).toBe("1.2.0");
    expect(
      (await json(second.app, "/nodes/alpha-pack/versions/1.2.0/comfy-nodes")).comfy_nodes.map(
        (c: { comfy_node_name: string }) => c.comfy_node_name,
      ),
    ).toEqual(["AlphaNode", "AlphaNodeTwo"]);
    // The older bundle's archives stay, the newer one's are added.
    for (const [id, version] of [
      ["alpha-pack", "1.1.0"],
      ["alpha-pack", "1.2.0"],
      ["beta-pack", "1.9.0"],
      ["delta-pack", "0.3.0"],
    ] as const) {
      const res = await binary(second.app, `/archives/${id}/${version}/node.zip`);
      expect(Buffer.compare(res.body, archiveBytes(id, version)), `${id} ${version}`).toBe(0);
    }

    await expect(
      importedCatalogSource(
        loadConfig({ DATA_DIR: harness.path("damaged"), CATALOG_SOURCE: join(harness.path("nope"), "missing.tar") }),
        silentLogger,
      ),
    ).rejects.toThrow(/missing\.tar/);
  });
});
