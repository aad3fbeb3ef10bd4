import { FIXTURE_SEED, generateCatalog, type GeneratedNode } from "./generated-catalog.ts";

/** Packs in the demo catalog: enough to page through and filter, few enough to make in a second. */
export const DEMO_NODES = 150;

/** Where the demo's versions say their archives are: a reserved name that never resolves, so only this service's copy is ever served. */
export const DEMO_UPSTREAM = "https://demo.invalid";

export interface DemoVersion extends Record<string, unknown> {
  node_id: string;
  version: string;
  createdAt: string;
  status: string;
  downloadUrl: string;
}

/**
 * CATALOG_SOURCE=demo: the tests' generated catalog (the same seed), each pack with its versions
 * (the install-path one and one or two older), every version with an archive (`archiveBytes`),
 * so every page shows versions and installs with no network.
 */
export function demoCatalog(): GeneratedNode[] {
  return generateCatalog({ seed: FIXTURE_SEED, nodes: DEMO_NODES }).map(withVersions);
}

/** The versions of a demo pack, newest first. */
export const demoVersions = (node: GeneratedNode): DemoVersion[] => (node.versions as DemoVersion[] | undefined) ?? [];

function withVersions(node: GeneratedNode): GeneratedNode {
  const created = typeof node.created_at === "string" ? node.created_at : "2024-01-01T00:00:00Z";
  const latest = {
    version: "1.0.0",
    createdAt: created,
    status: "NodeVersionStatusActive",
    ...(node.latest_version as Record<string, unknown> | undefined),
  };
  const [major, minor, patch] = String(latest.version).split(".").map(Number) as [number, number, number];
  const older = [patch > 0 ? `${major}.${minor}.${patch - 1}` : undefined, minor > 0 ? `${major}.${minor - 1}.0` : undefined].filter(
    (v): v is string => v !== undefined,
  );
  const day = 86_400_000;
  const version = (v: string, at: string, over: Record<string, unknown> = {}): DemoVersion => ({
    ...latest,
    id: `${node.id}@${v}`,
    node_id: node.id,
    version: v,
    createdAt: at,
    changelog: `Release ${v}`,
    deprecated: false,
    downloadUrl: `${DEMO_UPSTREAM}/${encodeURIComponent(node.id)}/${v}/node.zip`,
    ...over,
  });
  const install = version(String(latest.version), String(latest.createdAt));
  const versions = [
    install,
    ...older.map((v, i) =>
      version(v, new Date(Date.parse(String(latest.createdAt)) - (i + 1) * 30 * day).toISOString(), { status: "NodeVersionStatusActive" }),
    ),
  ];
  return { ...node, latest_version: install, versions };
}
