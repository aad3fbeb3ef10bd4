import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seeded } from "@app/testkit/catalog";
import { benchCatalogFile } from "./lib/catalog.ts";
import {
  alternatingRounds,
  DEFAULT_ROUNDS,
  gatewayFigures,
  startGatewayRig,
  summaryLine,
  type AlternatingFigures,
  type RoundOptions,
} from "./lib/gateway-rig.ts";
import { runWhenMain, type Figure } from "./lib/results.ts";
import { cycle } from "./lib/http-load.ts";

export interface GatewayRegistryReadsFigures extends AlternatingFigures, RoundOptions {
  catalog: string;
  versionsPerPack: number;
  paths: number;
  meanPageBytes: number;
  figures: Figure[];
  summary: string[];
}

const VERSIONS_PER_PACK = 10;

/**
 * The registry read routes' traffic on the real gateway, against the bare-Express baseline in
 * alternating rounds: ComfyUI-Manager's install lookups and version lists, and the frontend's
 * class → pack, installed packs by `node_id` (20 at a time) and pack classes, over 400 packs of
 * the bench catalog given ten versions each (the real catalog carries none until a mirror fills
 * them). These routes go through Express, unlike the list.
 */
export async function run(opts: RoundOptions = DEFAULT_ROUNDS): Promise<GatewayRegistryReadsFigures> {
  const dir = mkdtempSync(join(tmpdir(), "bench-registry-reads-"));
  try {
    const records = readFileSync(benchCatalogFile(), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
    for (const r of records) withVersions(r);
    const catalogFile = join(dir, "catalog.ndjson");
    writeFileSync(catalogFile, records.map((r) => JSON.stringify(r)).join("\n"));
    const paths = clientPaths(records.filter((r) => r.status !== "NodeStatusDeleted" && r.status !== "NodeStatusBanned"));
    const rig = await startGatewayRig(paths, catalogFile);
    try {
      const figures = await alternatingRounds(rig, { gateway: cycle(paths), baseline: cycle(paths) }, opts);
      return {
        ...opts,
        catalog: `${rig.catalog}, ${VERSIONS_PER_PACK} versions a pack`,
        versionsPerPack: VERSIONS_PER_PACK,
        paths: paths.length,
        meanPageBytes: rig.meanPageBytes,
        ...figures,
        figures: gatewayFigures("registry read routes", figures),
        summary: [summaryLine("gateway registry read routes (install, versions, class -> pack, node_id, classes)", figures)],
      };
    } finally {
      await rig.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ten versions, newest first, the newest the install-path one; downloadUrl and an id each. */
function withVersions(r: Record<string, any>): void {
  const versions = Array.from({ length: VERSIONS_PER_PACK }, (_, i) => {
    const v = `1.${VERSIONS_PER_PACK - 1 - i}.0`;
    return {
      id: `${r.id}@${v}`,
      version: v,
      createdAt: new Date(Date.UTC(2025, 0, 1) - i * 86_400_000).toISOString(),
      status: "NodeVersionStatusActive",
      changelog: `Release ${v}`,
      downloadUrl: `https://cdn.example/${r.id}/${v}.zip`,
    };
  });
  r.versions = versions;
  r.latest_version = versions[0];
}

/** 2,000 requests as the clients send them, over 400 packs drawn with a fixed seed. */
function clientPaths(packs: Record<string, any>[]): string[] {
  const rand = seeded(18);
  const pick = () => packs[Math.floor(rand() * packs.length)]!;
  const out: string[] = [];
  for (let i = 0; i < 400; i++) {
    const p = pick();
    const id = encodeURIComponent(p.id);
    const cls = (p.app_node_names as string[] | undefined)?.[0];
    out.push(
      `/nodes/${id}/install`,
      `/nodes/${id}/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending`,
      cls ? `/comfy-nodes/${encodeURIComponent(cls)}/node` : `/nodes/${id}`,
      `/nodes?${Array.from({ length: 20 }, () => `node_id=${encodeURIComponent(pick().id)}`).join("&")}`,
      `/nodes/${id}/versions/latest/comfy-nodes?page=1&limit=256`,
    );
  }
  return out;
}

await runWhenMain(import.meta.url, () => run());
