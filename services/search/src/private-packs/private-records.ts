import type { NodeVersion } from "@app/contracts";
import { archivePath } from "../domain/archive-links.ts";
import type { StoredNode } from "../domain/catalog-record.ts";
import { INSTALLABLE } from "../domain/versions.ts";
import { compareVersions } from "./domain/semver.ts";
import type { PrivateNodeRow, PrivatePackRepository, PrivateVersionRow, PublisherRow } from "./store/private-pack-repository.ts";

/** The tag every private pack carries, so pages and clients can tell it from the mirror's. */
export const PRIVATE_TAG = "private";

/**
 * The private packs as catalog records, so every read route, the search index and class search
 * serve them as they serve the mirror's. A version's `downloadUrl` is this instance's archive
 * path; the routes make it absolute. `latest_version` (the install path) is the highest
 * installable version by SemVer precedence, never by text.
 */
export async function privateRecords(repo: PrivatePackRepository): Promise<StoredNode[]> {
  const records: StoredNode[] = [];
  const publishers = new Map<string, PublisherRow | null>();
  for (const node of await repo.nodes()) {
    const key = node.publisherId.toLowerCase();
    if (!publishers.has(key)) publishers.set(key, await repo.publisher(node.publisherId));
    records.push(recordOf(node, publishers.get(key) ?? null, await repo.versions(node.id)));
  }
  return records;
}

export function recordOf(node: PrivateNodeRow, publisher: PublisherRow | null, rows: PrivateVersionRow[]): StoredNode {
  const f = node.fields as Record<string, string | string[] | undefined>;
  const versions = rows.map((v) => versionOf(node.id, v)).sort((a, b) => Date.parse(b.createdAt!) - Date.parse(a.createdAt!));
  const installable = rows.filter((v) => INSTALLABLE.has(v.status as never)).sort((a, b) => compareVersions(b.version, a.version));
  const latest = installable[0];
  const text = (k: string) => (typeof f[k] === "string" ? f[k] : undefined);
  const list = (k: string) => (Array.isArray(f[k]) ? f[k] : undefined);
  return {
    id: node.id,
    name: text("name") || node.id,
    description: text("description") ?? "",
    author: publisher?.name ?? node.publisherId,
    repository: text("repository") ?? "",
    license: text("license") ?? "",
    icon: text("icon") ?? "",
    banner_url: text("banner_url") ?? "",
    tags: [PRIVATE_TAG],
    status: node.status as StoredNode["status"],
    created_at: node.createdAt,
    downloads: 0,
    supported_os: list("supported_os"),
    supported_accelerators: list("supported_accelerators"),
    supported_app_version: text("supported_comfyui_version"),
    supported_app_frontend_version: text("supported_comfyui_frontend_version"),
    publisher: {
      id: node.publisherId,
      name: publisher?.name ?? node.publisherId,
      status: (publisher?.status ?? "PublisherStatusActive") as "PublisherStatusActive",
      createdAt: publisher?.createdAt,
      members: [{ role: "owner", user: { id: publisher?.owner, name: publisher?.owner } }],
    },
    versions,
    ...(latest && { latest_version: versionOf(node.id, latest), app_node_names: latest.classes, app_node_names_version: latest.version }),
  };
}

function versionOf(nodeId: string, v: PrivateVersionRow): NodeVersion {
  const f = v.fields;
  const list = (k: string) => (Array.isArray(f[k]) ? (f[k] as string[]) : []);
  return {
    id: v.id,
    node_id: nodeId,
    version: v.version,
    changelog: typeof f.changelog === "string" ? f.changelog : "",
    createdAt: v.createdAt,
    dependencies: list("dependencies"),
    deprecated: v.deprecated,
    downloadUrl: archivePath(nodeId, v.version),
    status: v.status as NodeVersion["status"],
    status_reason: v.statusReason,
    supported_os: list("supported_os"),
    supported_accelerators: list("supported_accelerators"),
    app_node_extract_status: "success",
  };
}
