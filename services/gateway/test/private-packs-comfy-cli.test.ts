import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCatalog } from "@app/testkit/catalog";
import { comfy, comfyCliMissing } from "@app/testkit/comfy-cli";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { SCRIPTS, startService, waitUntil, type Service } from "@app/testkit/processes";
import { comfyCliBaseUrl, mapNodeVersion } from "@app/testkit/registry-clients";

/**
 * A team publishes its own pack with the real `comfy node publish` (comfy-cli's Python source,
 * vendored) and installs it with comfy-cli's and ComfyUI-Manager's install flows, the upstream
 * registry gone. comfy-cli's only setting is ENVIRONMENT=dev, which means http://localhost:8080:
 * when that port is taken here the test says so and is skipped, as comfy-cli-dev.test.ts is.
 */
const DEV_URL = comfyCliBaseUrl({ ENVIRONMENT: "dev" });
const PORT = Number(new URL(DEV_URL).port);
const portFree = await new Promise<boolean>((resolve) => {
  const probe = createServer().once("error", () => resolve(false));
  probe.listen(PORT, "127.0.0.1", () => probe.close(() => resolve(true)));
});
const missing = comfyCliMissing();
const skip = !portFree || missing !== null;
if (!portFree) console.log(`skipped the private-pack comfy-cli test: port ${PORT} is in use here`);
if (missing) console.log(`skipped the private-pack comfy-cli test: ${missing}`);

const KEY = "team-key";
const root = mkdtempSync(join(tmpdir(), "private-pack-cli-"));
const dataDir = join(root, "data");
const home = join(root, "home");
const pack = join(root, "team-nodes");
let upstream: FakeRegistry;
let gateway: Service | undefined;
let token = "";

const PYPROJECT = `[project]
name = "team-nodes"
description = "Blur and sharpen, the team's way"
version = "1.2"
license = { file = "LICENSE" }
dependencies = []

[project.urls]
Repository = "https://git.example.internal/team/team-nodes"

[tool.comfy]
PublisherId = "team-a"
DisplayName = "Team Nodes"
Icon = ""
`;

const NODES_PY = `class TeamBlur:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"image": ("IMAGE",)}}

    RETURN_TYPES = ("IMAGE",)
    FUNCTION = "run"
    CATEGORY = "team"

    def run(self, image):
        return (image,)


NODE_CLASS_MAPPINGS = {"TeamBlur": TeamBlur}
NODE_DISPLAY_NAME_MAPPINGS = {"TeamBlur": "Team Blur"}
`;

const SOURCES: Record<string, string> = {
  "pyproject.toml": PYPROJECT,
  "__init__.py": "from .nodes import NODE_CLASS_MAPPINGS, NODE_DISPLAY_NAME_MAPPINGS\n",
  "nodes.py": NODES_PY,
  LICENSE: "MIT\n",
};

function gitFolder(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=team@example.internal", "-c", "user.name=team", ...args], { cwd: dir, stdio: "pipe" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "the pack");
}

const publishCli = (dir: string, withToken: string) =>
  comfy(["node", "publish", "--token", withToken], { cwd: dir, env: { ENVIRONMENT: "dev", HOME: home } });

async function startGateway(): Promise<Service> {
  return startService(SCRIPTS.gateway, { CATALOG_SOURCE: upstream.url, DATA_DIR: dataDir, API_KEYS: KEY }, { port: PORT });
}

async function api(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${DEV_URL}${path}`, {
    ...init,
    headers: { "content-type": "application/json", "x-api-key": KEY, ...init.headers },
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

beforeAll(async () => {
  if (skip) return;
  mkdirSync(home, { recursive: true });
  upstream = await new FakeRegistry(generateCatalog({ nodes: 12 })).start();
  gateway = await startGateway();
  await waitUntil(async () => (await api("/readyz")).body?.catalog?.state === "fresh", "the first mirror");
  expect((await api("/publishers", { method: "POST", body: JSON.stringify({ id: "team-a", name: "Team A" }) })).status).toBe(201);
  token = (await api("/publishers/team-a/tokens", { method: "POST", body: JSON.stringify({ name: "ci" }) })).body.token;
  gitFolder(pack, SOURCES);
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(skip)("a private pack through the real comfy-cli", () => {
  it("`ENVIRONMENT=dev comfy node publish --token …` in the pack's git folder exits 0", async () => {
    const run = await publishCli(pack, token);
    expect(run.output).toContain("Upload successful.");
    expect(run.code, run.output).toBe(0);
  }, 120_000);

  it("installs with comfy-cli's registry-install and ComfyUI-Manager's flow, the upstream gone, byte for byte", async () => {
    await upstream.stop();
    const workspace = join(root, "ComfyUI");
    mkdirSync(join(workspace, "custom_nodes"), { recursive: true });
    const install = await comfy(["--workspace", workspace, "--skip-prompt", "node", "registry-install", "team-nodes"], {
      cwd: root,
      env: { ENVIRONMENT: "dev", HOME: home },
    });
    expect(install.code, install.output).toBe(0);
    for (const [name, text] of Object.entries(SOURCES))
      expect(readFileSync(join(workspace, "custom_nodes", "team-nodes", name), "utf8"), name).toBe(text);

    // ComfyUI-Manager (cnr_utils.install_node, then its download of download_url): the archive is node.zip as comfy-cli made and sent it.
    const found = mapNodeVersion((await api("/nodes/team-nodes/install")).body);
    expect(found).toMatchObject({ version: "1.2.0", download_url: `${DEV_URL}/archives/team-nodes/1.2.0/node.zip` });
    const archive = Buffer.from(await (await fetch(found.download_url)).arrayBuffer());
    expect(archive.equals(readFileSync(join(pack, "node.zip")))).toBe(true);
  }, 120_000);

  it("is found by search and by its class name, as a private pack of its publisher", async () => {
    const byName = await api("/nodes/search?search=team%20nodes");
    expect(byName.body.nodes[0]).toMatchObject({ id: "team-nodes", tags: ["private"], publisher: { id: "team-a", name: "Team A" } });
    const byClass = await api("/nodes/search?app_node_search=TeamBlur");
    expect(byClass.body.nodes.map((n: { id: string }) => n.id)).toEqual(["team-nodes"]);
  });

  it("prints the registry's refusals and exits 1: a wrong token, a version that exists, a mirrored id", async () => {
    const wrong = await publishCli(pack, "crp_not-a-token");
    expect([wrong.code, wrong.output]).toEqual([1, expect.stringContaining("Invalid personal access token")]);
    const again = await publishCli(pack, token);
    expect([again.code, again.output]).toEqual([1, expect.stringContaining("The node version already exists")]);
    const mirroredId: string | undefined = (await api("/nodes?limit=50")).body.nodes.find(
      (n: { tags?: string[] }) => !n.tags?.includes("private"),
    )?.id;
    expect(mirroredId).toBeTruthy();
    const squatter = join(root, "squatter");
    gitFolder(squatter, {
      ...SOURCES,
      "pyproject.toml": PYPROJECT.replace('name = "team-nodes"', `name = "${String(mirroredId).toUpperCase()}"`),
    });
    const taken = await publishCli(squatter, token);
    expect([taken.code, taken.output]).toEqual([1, expect.stringContaining("taken by the mirrored registry")]);
    expect((await api(`/nodes/${encodeURIComponent(String(mirroredId))}`)).body.tags ?? []).not.toContain("private");
  }, 120_000);

  it("keeps the pack across a restart, the upstream still gone", async () => {
    await gateway!.stop();
    gateway = await startGateway();
    const found = mapNodeVersion((await api("/nodes/team-nodes/install")).body);
    const archive = Buffer.from(await (await fetch(found.download_url)).arrayBuffer());
    expect(archive.equals(readFileSync(join(pack, "node.zip")))).toBe(true);
  }, 120_000);
});
