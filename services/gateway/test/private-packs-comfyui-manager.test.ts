import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCatalog } from "@app/testkit/catalog";
import { comfyuiManagerInstall, comfyuiManagerMissing } from "@app/testkit/comfyui-manager";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { SCRIPTS, startService, waitUntil, type Service } from "@app/testkit/processes";
import { zipOf } from "@app/testkit/zip-files";

/**
 * A team publishes its own pack to this registry, the upstream registry goes away, and
 * ComfyUI-Manager's own Python code (vendored unchanged, test-support/vendor/README.md) installs it:
 * the files in custom_nodes are the published archive's entries, byte for byte.
 */
const PYTHON = "/usr/bin/python3";
const noPython = !existsSync(PYTHON);
if (noPython) console.log(`skipped the ComfyUI-Manager private-pack test: ${PYTHON} is absent`);

const KEY = "team-key";
const root = mkdtempSync(join(tmpdir(), "private-pack-manager-"));
let upstream: FakeRegistry;
let gateway: Service | undefined;

const ENTRIES: Record<string, Buffer> = {
  "pyproject.toml": Buffer.from('[project]\nname = "team-nodes"\nversion = "1.2.0"\n'),
  "__init__.py": Buffer.from("from .team_nodes.nodes import NODE_CLASS_MAPPINGS\n"),
  "team_nodes/nodes.py": Buffer.from('NODE_CLASS_MAPPINGS = {"TeamBlur": object}\n'),
  "team_nodes/lut.bin": Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256)),
};
const ARCHIVE = zipOf(Object.entries(ENTRIES).map(([name, data]) => ({ name, data, deflate: name.endsWith(".bin") })));

async function api(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${gateway!.url}${path}`, {
    ...init,
    headers: { "content-type": "application/json", "x-api-key": KEY, ...init.headers },
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** The body `comfy node publish` sends (comfy_cli/registry/api.py). */
function publishBody(token: string) {
  const supported = { supported_os: [], supported_accelerators: [], supported_comfyui_version: "", supported_comfyui_frontend_version: "" };
  return {
    personal_access_token: token,
    node: { id: "team-nodes", name: "Team Nodes", description: "", icon: "", license: "", repository: "", banner_url: "", ...supported },
    node_version: { version: "1.2.0", dependencies: [], ...supported },
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

beforeAll(async () => {
  if (noPython) return;
  upstream = await new FakeRegistry(generateCatalog({ nodes: 12 })).start();
  gateway = await startService(SCRIPTS.gateway, { CATALOG_SOURCE: upstream.url, DATA_DIR: join(root, "data"), API_KEYS: KEY });
  await waitUntil(async () => (await api("/readyz")).body?.catalog?.state === "fresh", "the first mirror");
  expect((await api("/publishers", { method: "POST", body: JSON.stringify({ id: "team-a", name: "Team A" }) })).status).toBe(201);
  const token = (await api("/publishers/team-a/tokens", { method: "POST", body: JSON.stringify({ name: "ci" }) })).body.token;
  const started = await api("/publishers/team-a/nodes/team-nodes/versions", { method: "POST", body: JSON.stringify(publishBody(token)) });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const signed = new URL(started.body.signedUrl);
  const put = await fetch(`${gateway.url}${signed.pathname}${signed.search}`, {
    method: "PUT",
    headers: { "content-type": "application/zip" },
    body: new Uint8Array(ARCHIVE),
  });
  expect(put.status, await put.text()).toBe(200);
  await upstream.stop();
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(noPython)("a private pack installed by ComfyUI-Manager's own code, the upstream registry gone", () => {
  it("has Manager's Debian dependencies", () => {
    expect(comfyuiManagerMissing()).toBeNull();
  });

  it("cnr_install exits 0 and custom_nodes/<id> holds exactly the published entries, byte for byte", async () => {
    const customNodes = join(root, "ComfyUI", "custom_nodes");
    const userDir = join(root, "ComfyUI", "user");
    mkdirSync(customNodes, { recursive: true });
    mkdirSync(userDir, { recursive: true });
    await expect(fetch(`${upstream.url}/nodes`)).rejects.toThrow();
    const run = await comfyuiManagerInstall({ registryUrl: gateway!.url, customNodes, userDir, nodeId: "team-nodes" });
    expect(run.code, run.output).toBe(0);

    const installed = join(customNodes, "team-nodes");
    // `.tracking` is Manager's own record of the archive's entries, which it reads to uninstall.
    expect(filesUnder(installed)).toEqual([...Object.keys(ENTRIES), ".tracking"].sort());
    for (const [name, data] of Object.entries(ENTRIES)) expect(readFileSync(join(installed, name)).equals(data), name).toBe(true);
    expect(readFileSync(join(installed, ".tracking"), "utf8").split("\n")).toEqual(Object.keys(ENTRIES));
    // Manager downloads beside the packs under a random name and removes the archive afterwards.
    expect(readdirSync(customNodes)).toEqual(["team-nodes"]);
  }, 120_000);

  it("exits 1 with Manager's message for an id the registry does not have, installing nothing", async () => {
    const customNodes = join(root, "Other", "custom_nodes");
    const userDir = join(root, "Other", "user");
    mkdirSync(customNodes, { recursive: true });
    mkdirSync(userDir, { recursive: true });
    const run = await comfyuiManagerInstall({ registryUrl: gateway!.url, customNodes, userDir, nodeId: "team-nodes-nowhere" });
    expect([run.code, run.output]).toEqual([1, expect.stringContaining("not available node: team-nodes-nowhere")]);
    expect(readdirSync(customNodes)).toEqual([]);
  }, 120_000);
});
