import { mkdtemp, rm } from "node:fs/promises";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createLogger, loadConfig } from "@app/platform";
import type { RegistryNode } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import type { MirrorOptions } from "../src/adapters/registry/mirror-options.ts";
import { createSearchRuntime, type SearchRuntime } from "../src/compose.ts";
import { EmbeddedSearchEngine } from "../src/adapters/embedded/embedded-engine.ts";
import type { StoredNode } from "../src/domain/catalog-record.ts";
import { createApp } from "../src/app.ts";

export const silentLogger = createLogger("search-test", "silent");

export async function appWith(records: StoredNode[]): Promise<{ app: RequestListener; engine: EmbeddedSearchEngine }> {
  const engine = new EmbeddedSearchEngine();
  await engine.replaceAll(records);
  return { app: createApp({ engine, logger: silentLogger, isReady: () => true }), engine };
}

/** A small catalog exercising every field, status and alias. */
export const FIXTURES: StoredNode[] = [
  {
    id: "comfyui-impact-pack",
    name: "ComfyUI Impact Pack",
    description: "Detectors, detailers, upscalers",
    author: "Dr.Lt.Data",
    category: "image",
    tags: ["detailer"],
    tags_admin: ["reviewed"],
    created_at: "2023-05-15T01:50:53Z",
    downloads: 1000,
    repo_stars: 2500,
    rating: 4.5,
    search_ranking: 10,
    banner_url: "https://example.com/b.png",
    icon: "https://example.com/i.png",
    repository: "https://github.com/ltdrdata/ComfyUI-Impact-Pack",
    license: "LICENSE",
    status: "NodeStatusActive",
    status_detail: "ok",
    latest_version: {
      id: "v1",
      node_id: "comfyui-impact-pack",
      version: "8.0.0",
      changelog: "c",
      createdAt: "2024-01-01T00:00:00Z",
      dependencies: ["ultralytics"],
      deprecated: false,
      downloadUrl: "https://example.com/d.zip",
      status: "NodeVersionStatusActive",
      status_reason: "",
      app_node_extract_status: "success",
      supported_os: ["OS Independent"],
    },
    publisher: { id: "ltdrdata", name: "Dr.Lt.Data", members: [{ id: "m", role: "owner", user: { id: "u", name: "U" } }] },
    preempted_app_node_names: ["SAMLoader"],
    supported_accelerators: ["GPU :: NVIDIA CUDA"],
    supported_app_frontend_version: ">=1.0",
    supported_app_version: ">=0.3",
    supported_os: ["Microsoft :: Windows", "POSIX :: Linux"],
    translations: { fr: { name: "Pack Impact" } },
    app_node_names: ["FaceDetailer", "SAMLoader"],
  },
  {
    id: "kjnodes",
    name: "KJNodes for ComfyUI",
    repository: "https://github.com/kijai/ComfyUI-KJNodes",
    repo_stars: 3000,
    status: "NodeStatusActive",
    app_node_names: ["GetNode"],
  },
  { id: "banned-pack", name: "Banned Pack", status: "NodeStatusBanned", repo_stars: 5, supported_os: ["MacOS"] },
  { id: "deleted-pack", name: "Deleted Pack", status: "NodeStatusDeleted", repo_stars: 6 },
  ...Array.from({ length: 23 }, (_, i): StoredNode => ({
    id: `filler-${String(i).padStart(2, "0")}`,
    name: `Filler Pack ${i}`,
    repo_stars: i,
    supported_os: i % 2 ? ["MacOS"] : ["POSIX :: Linux"],
  })),
];

/**
 * A test file's fake registries and search services, each closed after its test, with data
 * folders under one temporary folder removed after the file.
 */
export function mirrorHarness(name: string, mirror: MirrorOptions) {
  let dir = "";
  const open: SearchRuntime[] = [];
  const registries: FakeRegistry[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `${name}-`));
  });
  afterEach(async () => {
    for (const d of open.splice(0)) await d.close();
    for (const r of registries.splice(0)) await r.stop();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return {
    /** A folder for one test's DATA_DIR. */
    path: (sub: string) => join(dir, sub),
    /** A fake registry over its own copy of `nodes` (tests change it). */
    async registry(nodes: RegistryNode[]): Promise<FakeRegistry> {
      const r = await new FakeRegistry(structuredClone(nodes), { seed: 5 }).start();
      registries.push(r);
      return r;
    },
    async deps(env: Record<string, string>, extra: MirrorOptions = {}): Promise<SearchRuntime> {
      const d = await createSearchRuntime(loadConfig({ LOG_LEVEL: "silent", ...env }), silentLogger, { mirror: { ...mirror, ...extra } });
      open.push(d);
      return d;
    },
  };
}
