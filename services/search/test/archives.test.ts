import { createHash } from "node:crypto";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "@app/platform";
import { archiveBytes, archiveReprDigest } from "@app/testkit/fake-archives";
import type { RegistryNode } from "@app/testkit/catalog";
import type { FakeRegistry } from "@app/testkit/fake-registry";
import { waitUntil } from "@app/testkit/processes";
import { createApp } from "../src/app.ts";
import { catalogVersionOf, createArchiveService, type ArchiveService } from "../src/adapters/archives/archive-service.ts";
import type { SearchRuntime } from "../src/compose.ts";
import { mirrorHarness, silentLogger } from "./helpers.ts";

/**
 * The node archives served by the service, at each MIRROR_ARCHIVES setting,
 * against the testkit's fake registry, whose storage serves real zips and is stopped mid-test.
 */
const v = (version: string, status: string, createdAt: string) => ({ version, status, createdAt });
const PACKS: RegistryNode[] = [
  {
    id: "alpha-pack",
    name: "Alpha",
    status: "NodeStatusActive",
    versions: [
      v("1.1.0", "NodeVersionStatusActive", "2024-05-01T00:00:00Z"),
      v("1.0.0", "NodeVersionStatusActive", "2024-03-01T00:00:00Z"),
    ],
  },
  {
    id: "beta-pack",
    name: "Beta",
    status: "NodeStatusActive",
    versions: [
      v("2.0.0", "NodeVersionStatusBanned", "2024-06-01T00:00:00Z"),
      v("1.9.0", "NodeVersionStatusActive", "2024-04-01T00:00:00Z"),
      v("1.8.0", "NodeVersionStatusDeleted", "2024-02-01T00:00:00Z"),
    ],
  },
  {
    id: "gamma-pack",
    name: "Gamma",
    status: "NodeStatusBanned",
    versions: [v("1.0.0", "NodeVersionStatusActive", "2024-01-01T00:00:00Z")],
  },
  {
    id: "delta-pack",
    name: "Delta",
    status: "NodeStatusActive",
    versions: [
      v("0.3.0", "NodeVersionStatusPending", "2024-07-01T00:00:00Z"),
      v("0.2.0", "NodeVersionStatusFlagged", "2024-06-01T00:00:00Z"),
      v("0.1.0", "NodeVersionStatusActive", "2024-01-01T00:00:00Z"),
    ],
  },
];
const INSTALL_PATH = [
  ["alpha-pack", "1.1.0"],
  ["beta-pack", "1.9.0"],
  ["delta-pack", "0.3.0"],
] as const;
const EVERY_SERVABLE = [
  ...INSTALL_PATH,
  ["alpha-pack", "1.0.0"],
  ["beta-pack", "1.8.0"],
  ["delta-pack", "0.2.0"],
  ["delta-pack", "0.1.0"],
] as const;

const harness = mirrorHarness("search-archives", { pageSize: 25, retryDelayMs: 10, headersTimeoutMs: 30_000 });
const services: ArchiveService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

interface Served {
  registry: FakeRegistry;
  deps: SearchRuntime;
  archives: ArchiveService;
  app: ReturnType<typeof createApp>;
}

async function serve(mode: string, sub: string, env: Record<string, string> = {}): Promise<Served> {
  const registry = await harness.registry(PACKS);
  const config = {
    DATA_DIR: harness.path(sub),
    CATALOG_SOURCE: registry.url,
    CATALOG_REFRESH: "off",
    MIRROR_ARCHIVES: mode,
    ARCHIVE_TIMEOUT_MS: "3000",
    LOG_LEVEL: "silent",
    ...env,
  };
  const deps = await harness.deps(config);
  const archives = await createArchiveService(loadConfig(config), silentLogger, {
    engine: deps.engine,
    catalogVersion: () => catalogVersionOf(deps.catalogStatus()),
    prefetch: { pollMs: 50, retryDelayMs: 10 },
  });
  services.push(archives);
  await waitUntil(() => deps.catalogStatus().mirror?.phase === "done" && deps.catalogStatus().state === "fresh", "the first mirror pass", {
    tries: 1200,
  });
  return { registry, deps, archives, app: createApp({ ...deps, archives }) };
}

const binary = (app: Served["app"], path: string) =>
  request(app)
    .get(path)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => done(null, Buffer.concat(chunks)));
    });
const storageHits = (r: FakeRegistry, id?: string, version?: string) =>
  r.requests(/^\/storage\//).filter((q) => !id || q.path === `/storage/${id}/${version}/node.zip`).length;
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("MIRROR_ARCHIVES=on-demand (the default)", () => {
  it("answers every version's downloadUrl as this service's archive route, from PUBLIC_URL or the request's forwarded host", async () => {
    const s = await serve("on-demand", "links");
    const install = await request(s.app)
      .get("/nodes/alpha-pack/install")
      .set("x-forwarded-proto", "https")
      .set("x-forwarded-host", "api.comfy.org");
    expect(install.body).toMatchObject({ version: "1.1.0", downloadUrl: "https://api.comfy.org/archives/alpha-pack/1.1.0/node.zip" });
    const plain = await request(s.app).get("/nodes/alpha-pack/versions").set("host", "mirror.lan:8080");
    expect(plain.body.map((x: { downloadUrl: string }) => x.downloadUrl)).toEqual([
      "http://mirror.lan:8080/archives/alpha-pack/1.1.0/node.zip",
      "http://mirror.lan:8080/archives/alpha-pack/1.0.0/node.zip",
    ]);
    expect((await request(s.app).get("/nodes/alpha-pack/versions/1.0.0").set("host", "h")).body.downloadUrl).toBe(
      "http://h/archives/alpha-pack/1.0.0/node.zip",
    );
    expect((await request(s.app).get("/nodes/alpha-pack").set("host", "h")).body.latest_version.downloadUrl).toBe(
      "http://h/archives/alpha-pack/1.1.0/node.zip",
    );
    expect((await request(s.app).get("/versions?nodeId=delta-pack").set("host", "h")).body.versions[0].downloadUrl).toBe(
      "http://h/archives/delta-pack/0.3.0/node.zip",
    );
    const bulk = await request(s.app)
      .post("/bulk/nodes/versions")
      .set("host", "h")
      .send({ node_versions: [{ node_id: "beta-pack", version: "1.9.0" }] });
    expect(bulk.body.node_versions[0].node_version.downloadUrl).toBe("http://h/archives/beta-pack/1.9.0/node.zip");
    // A forged Host that is no host name is not put into a URL.
    expect((await request(s.app).get("/nodes/alpha-pack/install").set("host", "a b/c")).body.downloadUrl).toBe(
      "http://localhost/archives/alpha-pack/1.1.0/node.zip",
    );
    // Nothing was fetched ahead of a request.
    expect(storageHits(s.registry)).toBe(0);
    expect(s.archives.status()).toEqual({ mode: "on-demand", stored: 0, total: null, failed: null, lastErrors: [] });

    const fixed = await serve("on-demand", "links-public", { PUBLIC_URL: "https://registry.example.org/" });
    expect((await request(fixed.app).get("/nodes/alpha-pack/install").set("x-forwarded-host", "other")).body.downloadUrl).toBe(
      "https://registry.example.org/archives/alpha-pack/1.1.0/node.zip",
    );
  });

  it("pulls an archive through on first request (bytes and digest equal upstream's), then serves it from the store, with upstream up and then stopped", async () => {
    const s = await serve("on-demand", "pull-through");
    const first = await binary(s.app, "/archives/alpha-pack/1.1.0/node.zip");
    expect(first.status).toBe(200);
    expect(first.headers["content-type"]).toBe("application/zip");
    expect(sha256(first.body)).toBe(sha256(archiveBytes("alpha-pack", "1.1.0")));
    expect(storageHits(s.registry, "alpha-pack", "1.1.0")).toBe(1);

    const again = await binary(s.app, "/archives/alpha-pack/1.1.0/node.zip");
    expect(Buffer.compare(again.body, archiveBytes("alpha-pack", "1.1.0"))).toBe(0);
    expect(again.headers["repr-digest"]).toBe(archiveReprDigest("alpha-pack", "1.1.0"));
    expect(again.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(storageHits(s.registry, "alpha-pack", "1.1.0")).toBe(1);
    expect(s.archives.status()).toMatchObject({ mode: "on-demand", stored: 1 });

    const zip = archiveBytes("alpha-pack", "1.1.0");
    const part = await binary(s.app, "/archives/alpha-pack/1.1.0/node.zip").set("range", "bytes=10-99");
    expect(part.status).toBe(206);
    expect(part.headers["content-range"]).toBe(`bytes 10-99/${zip.length}`);
    expect(Buffer.compare(part.body, zip.subarray(10, 100))).toBe(0);
    expect(
      (
        await request(s.app)
          .get("/archives/alpha-pack/1.1.0/node.zip")
          .set("range", `bytes=${zip.length + 5}-`)
      ).status,
    ).toBe(416);
    expect((await request(s.app).get("/archives/alpha-pack/1.1.0/node.zip").set("if-none-match", again.headers.etag!)).status).toBe(304);
    const head = await request(s.app).head("/archives/alpha-pack/1.1.0/node.zip");
    expect([head.status, head.headers["content-length"], head.headers["repr-digest"]]).toEqual([
      200,
      String(zip.length),
      archiveReprDigest("alpha-pack", "1.1.0"),
    ]);

    await s.registry.stop();
    const stopped = await binary(s.app, "/archives/alpha-pack/1.1.0/node.zip");
    expect(stopped.status).toBe(200);
    expect(Buffer.compare(stopped.body, zip)).toBe(0);
    // Not stored, upstream down: 503 naming the version, at once.
    const missing = await request(s.app).get("/archives/alpha-pack/1.0.0/node.zip");
    expect(missing.status).toBe(503);
    expect(missing.body).toMatchObject({ error: "archive_unavailable", message: expect.stringContaining('"1.0.0"') });
    expect(missing.body.message).toContain("alpha-pack");

    await s.registry.start();
    const back = await binary(s.app, "/archives/alpha-pack/1.0.0/node.zip");
    expect(back.status).toBe(200);
    expect(Buffer.compare(back.body, archiveBytes("alpha-pack", "1.0.0"))).toBe(0);
  });

  it("a HEAD before any GET stores the archive and answers its length and digest", async () => {
    const s = await serve("on-demand", "head-first");
    const head = await request(s.app).head("/archives/delta-pack/0.2.0/node.zip");
    expect(head.status).toBe(200);
    expect(head.headers["repr-digest"]).toBe(archiveReprDigest("delta-pack", "0.2.0"));
    expect(head.headers["content-length"]).toBe(String(archiveBytes("delta-pack", "0.2.0").length));
    expect(storageHits(s.registry, "delta-pack", "0.2.0")).toBe(1);
  });

  it("answers 503 within the timeout when upstream's storage never answers, and stores nothing", async () => {
    const s = await serve("on-demand", "stall", { ARCHIVE_TIMEOUT_MS: "300" });
    s.registry.fault(/^\/storage\/beta-pack\//, "stall", 1);
    const res = await request(s.app).get("/archives/beta-pack/1.9.0/node.zip");
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/no answer .* within 300 ms/);
    expect(await s.archives.store.stored("beta-pack", "1.9.0")).toBeUndefined();
  });

  it("never serves a banned pack's or a banned version's archive (403), and 404s what the catalog does not know", async () => {
    const s = await serve("on-demand", "refusals");
    const bannedPack = await request(s.app).get("/archives/gamma-pack/1.0.0/node.zip");
    expect([bannedPack.status, bannedPack.body.error]).toEqual([403, "forbidden"]);
    const bannedVersion = await request(s.app).get("/archives/beta-pack/2.0.0/node.zip");
    expect([bannedVersion.status, bannedVersion.body.error]).toEqual([403, "forbidden"]);
    expect(bannedVersion.body.message).toContain("banned");
    expect((await request(s.app).get("/archives/no-such-pack/1.0.0/node.zip")).status).toBe(404);
    const noVersion = await request(s.app).get("/archives/alpha-pack/9.9.9/node.zip");
    expect([noVersion.status, noVersion.body.error]).toEqual([404, "not_found"]);
    expect(storageHits(s.registry)).toBe(0);
  });
});

describe("MIRROR_ARCHIVES=latest and all: stored while mirroring", () => {
  it("latest stores every pack's install-path version, and serves them all with upstream stopped", async () => {
    const s = await serve("latest", "latest");
    await waitUntil(() => s.archives.status().stored === INSTALL_PATH.length, "the install-path archives", { tries: 600 });
    expect(s.archives.status()).toEqual({
      mode: "latest",
      total: INSTALL_PATH.length,
      stored: INSTALL_PATH.length,
      failed: 0,
      lastErrors: [],
    });
    expect(storageHits(s.registry)).toBe(INSTALL_PATH.length);
    await s.registry.stop();
    for (const [id, version] of INSTALL_PATH) {
      const res = await binary(s.app, `/archives/${id}/${version}/node.zip`);
      expect(res.status, `${id} ${version}`).toBe(200);
      expect(res.headers["repr-digest"]).toBe(archiveReprDigest(id, version));
      expect(Buffer.compare(res.body, archiveBytes(id, version))).toBe(0);
    }
    expect((await request(s.app).get("/archives/alpha-pack/1.0.0/node.zip")).status).toBe(503);
  });

  it("all stores every version but banned ones, retrying one that failed; /readyz shows the progress", async () => {
    const registryFault = (r: FakeRegistry) => r.fault(/^\/storage\/delta-pack\/0\.1\.0\//, "500", 1);
    const s = await serve("all", "all", {});
    registryFault(s.registry);
    await waitUntil(() => s.archives.status().stored === EVERY_SERVABLE.length, "every servable archive", { tries: 600 });
    const ready = await request(s.app).get("/readyz");
    expect(ready.body.catalog.archives).toMatchObject({
      mode: "all",
      total: EVERY_SERVABLE.length,
      stored: EVERY_SERVABLE.length,
      failed: 0,
    });
    await s.registry.stop();
    for (const [id, version] of EVERY_SERVABLE) {
      const res = await binary(s.app, `/archives/${id}/${version}/node.zip`);
      expect(Buffer.compare(res.body, archiveBytes(id, version)), `${id} ${version}`).toBe(0);
    }
    expect((await request(s.app).get("/archives/beta-pack/2.0.0/node.zip")).status).toBe(403);
    expect((await request(s.app).get("/archives/gamma-pack/1.0.0/node.zip")).status).toBe(403);
  });
});

describe("MIRROR_ARCHIVES=off", () => {
  it("keeps upstream's downloadUrl and fetches nothing", async () => {
    const s = await serve("off", "off");
    const install = await request(s.app).get("/nodes/alpha-pack/install");
    expect(install.body.downloadUrl).toBe(s.registry.archiveUrl("alpha-pack", "1.1.0"));
    const res = await request(s.app).get("/archives/alpha-pack/1.1.0/node.zip");
    expect(res.status).toBe(404);
    expect(res.body.message).toContain("MIRROR_ARCHIVES=off");
    expect(storageHits(s.registry)).toBe(0);
  });
});
