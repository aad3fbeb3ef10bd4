import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateCatalog, writeCatalogFile } from "@app/testkit/catalog";
import { runScript, SCRIPTS, startService, type Service } from "@app/testkit/processes";
import { zipOf } from "@app/testkit/zip-files";

/**
 * A closed network: `pnpm mirror export` carries the teams' private packs and their archives
 * with the mirror, and a service started from the bundle serves them as its own private packs.
 */
const root = mkdtempSync(join(tmpdir(), "private-pack-bundle-"));
const running: Service[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  rmSync(root, { recursive: true, force: true });
});

const ZIP = zipOf([{ name: "__init__.py", data: 'NODE_CLASS_MAPPINGS = {"InsideNode": object}\n', deflate: true }]);

async function call(base: string, path: string, init: RequestInit & { key?: string } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { "content-type": "application/json", ...(init.key && { "x-api-key": init.key }) },
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

describe("a mirror bundle with private packs", () => {
  it("carries them and their archives; the closed side serves them byte for byte", async () => {
    const catalog = join(root, "catalog.ndjson");
    writeCatalogFile(catalog, generateCatalog({ nodes: 8 }));
    const outsideData = join(root, "outside");
    const outside = await startService(SCRIPTS.gateway, { CATALOG_SOURCE: catalog, DATA_DIR: outsideData, API_KEYS: "k" });
    running.push(outside);
    expect((await call(outside.url, "/publishers", { method: "POST", key: "k", body: JSON.stringify({ id: "team-a" }) })).status).toBe(201);
    const token = (await call(outside.url, "/publishers/team-a/tokens", { method: "POST", key: "k", body: JSON.stringify({ name: "ci" }) }))
      .body.token;
    const started = await call(outside.url, "/publishers/team-a/nodes/inside-nodes/versions", {
      method: "POST",
      body: JSON.stringify({
        personal_access_token: token,
        node: { id: "inside-nodes", name: "Inside" },
        node_version: { version: "2.0.0" },
      }),
    });
    expect(started.status).toBe(201);
    expect(
      (await fetch(started.body.signedUrl, { method: "PUT", headers: { "content-type": "application/zip" }, body: new Uint8Array(ZIP) }))
        .status,
    ).toBe(200);

    const bundle = join(root, "mirror.tar");
    const exported = await runScript("services/search/src/cli/mirror.ts", ["export", bundle], { DATA_DIR: outsideData });
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ nodes: 8, privatePacks: 1 });

    const inside = await startService(SCRIPTS.gateway, { CATALOG_SOURCE: bundle, DATA_DIR: join(root, "inside"), API_KEYS: "other" });
    running.push(inside);
    const install = await call(inside.url, "/nodes/inside-nodes/install");
    expect(install.body).toMatchObject({ version: "2.0.0", downloadUrl: `${inside.url}/archives/inside-nodes/2.0.0/node.zip` });
    expect(Buffer.from(await (await fetch(install.body.downloadUrl)).arrayBuffer()).equals(ZIP)).toBe(true);
    expect((await call(inside.url, "/nodes/search?app_node_search=InsideNode")).body.nodes.map((n: { id: string }) => n.id)).toEqual([
      "inside-nodes",
    ]);
    expect((await call(inside.url, "/nodes?limit=100")).body.total).toBe(9);
  }, 180_000);
});
