import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "@app/platform";
import { SCRIPTS, startService, type Service } from "@app/testkit/processes";
import { comfyCliBaseUrl, mapNodeToNodeClass, mapNodeVersion } from "@app/testkit/registry-clients";
import { VERSIONED_CATALOG } from "@app/testkit/registry-versions-catalog";

/**
 * comfy-cli is the one registry client that a setting alone points here: `ENVIRONMENT=dev`
 * makes it call http://localhost:8080, where `pnpm start` listens by default. This starts the
 * gateway as `pnpm start` does, on that port, and makes comfy-cli's calls at exactly the URL it
 * builds. Port 8080 is the point of the test: when something else holds it, the test says so
 * and is skipped rather than run elsewhere.
 */
const DEV_URL = comfyCliBaseUrl({ ENVIRONMENT: "dev" });
const PORT = Number(new URL(DEV_URL).port);

const portFree = await new Promise<boolean>((resolve) => {
  const probe = createServer().once("error", () => resolve(false));
  probe.listen(PORT, "127.0.0.1", () => probe.close(() => resolve(true)));
});
if (!portFree) console.log(`skipped comfy-cli's ENVIRONMENT=dev test: port ${PORT} is in use here`);

const dataDir = mkdtempSync(join(tmpdir(), "comfy-cli-dev-"));
let gateway: Service | undefined;
afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("comfy-cli with ENVIRONMENT=dev", () => {
  it("points at the port a default start listens on", () => {
    expect(DEV_URL).toBe("http://localhost:8080");
    expect(loadConfig({}).PORT).toBe(PORT);
  });

  it.skipIf(!portFree)(
    "list_all_nodes, get_node (an id in other capitals) and install_node get what comfy-cli reads",
    async () => {
      const catalog = join(dataDir, "catalog.ndjson");
      writeFileSync(catalog, VERSIONED_CATALOG.map((r) => JSON.stringify(r)).join("\n"));
      gateway = await startService(SCRIPTS.gateway, { CATALOG_SOURCE: catalog, DATA_DIR: dataDir }, { port: PORT });

      const list = await fetch(`${DEV_URL}/nodes`);
      expect(list.status).toBe(200);
      const nodes = ((await list.json()) as { nodes: Record<string, unknown>[] }).nodes.map(mapNodeToNodeClass);
      expect(nodes).toHaveLength(10);

      const node = await fetch(`${DEV_URL}/nodes/comfyui-kjnodes`);
      expect(node.status).toBe(200);
      expect(mapNodeToNodeClass((await node.json()) as Record<string, unknown>)).toMatchObject({
        id: "ComfyUI-KJNodes",
        latest_version: { version: "1.1.0" },
      });

      const install = await fetch(`${DEV_URL}/nodes/comfyui-impact-pack/install`);
      expect(install.status).toBe(200);
      expect(mapNodeVersion((await install.json()) as Record<string, unknown>)).toMatchObject({
        version: "8.8.1",
        download_url: `${DEV_URL}/archives/comfyui-impact-pack/8.8.1/node.zip`,
      }); // the service's archive route (MIRROR_ARCHIVES defaults to on-demand), at the address comfy-cli used
    },
    120_000,
  );
});
