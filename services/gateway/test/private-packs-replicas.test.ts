import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateCatalog, writeCatalogFile } from "@app/testkit/catalog";
import { createTestDatabase, type TestDatabase } from "@app/testkit/postgres";
import { SCRIPTS, startService, waitUntil, type Service } from "@app/testkit/processes";
import { startS3, type RunningS3 } from "@app/testkit/s3rver";
import { zipOf } from "@app/testkit/zip-files";

/**
 * Two replicas that share only PostgreSQL and S3 (each its own DATA_DIR): a pack published
 * through one installs through the other, which learns of it from the database's revision.
 */
const root = mkdtempSync(join(tmpdir(), "private-pack-replicas-"));
const running: Service[] = [];
let s3: RunningS3 | undefined;
let database: TestDatabase | undefined;
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  await s3?.stop();
  await database?.drop();
  rmSync(root, { recursive: true, force: true });
});

const ZIP = zipOf([{ name: "__init__.py", data: 'NODE_CLASS_MAPPINGS = {"SharedNode": object}\n', deflate: true }]);

async function call(base: string, path: string, init: RequestInit & { key?: string } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { "content-type": "application/json", ...(init.key && { "x-api-key": init.key }) },
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

describe("private packs on two replicas (PostgreSQL and S3)", () => {
  it("a pack published through one installs through the other, byte for byte", async () => {
    s3 = await startS3();
    database = await createTestDatabase("private_replicas");
    const catalog = join(root, "catalog.ndjson");
    writeCatalogFile(catalog, generateCatalog({ nodes: 6 }));
    const shared = {
      CATALOG_SOURCE: catalog,
      API_KEYS: "k",
      DATABASE_URL: database.url,
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY: s3.accessKey,
      S3_SECRET_KEY: s3.secretKey,
      S3_BUCKET: "private-packs",
    };
    const [a, b] = await Promise.all([
      startService(SCRIPTS.gateway, { ...shared, DATA_DIR: join(root, "a") }),
      startService(SCRIPTS.gateway, { ...shared, DATA_DIR: join(root, "b") }),
    ]);
    running.push(a, b);

    expect((await call(a.url, "/publishers", { method: "POST", key: "k", body: JSON.stringify({ id: "team-a" }) })).status).toBe(201);
    const token = (await call(b.url, "/publishers/team-a/tokens", { method: "POST", key: "k", body: JSON.stringify({ name: "ci" }) })).body
      .token;
    const started = await call(a.url, "/publishers/team-a/nodes/shared-nodes/versions", {
      method: "POST",
      body: JSON.stringify({ personal_access_token: token, node: { id: "shared-nodes" }, node_version: { version: "1.0.0" } }),
    });
    expect(started.status).toBe(201);
    expect(
      (await fetch(started.body.signedUrl, { method: "PUT", headers: { "content-type": "application/zip" }, body: new Uint8Array(ZIP) }))
        .status,
    ).toBe(200);

    await waitUntil(async () => (await call(b.url, "/nodes/shared-nodes/install")).status === 200, "the other replica serving the pack");
    const install = await call(b.url, "/nodes/shared-nodes/install");
    expect(install.body.downloadUrl).toBe(`${b.url}/archives/shared-nodes/1.0.0/node.zip`);
    expect(Buffer.from(await (await fetch(install.body.downloadUrl)).arrayBuffer()).equals(ZIP)).toBe(true);
    expect((await call(b.url, "/nodes/search?app_node_search=SharedNode")).body.nodes.map((n: { id: string }) => n.id)).toEqual([
      "shared-nodes",
    ]);
  }, 180_000);
});
