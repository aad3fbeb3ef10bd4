import type { CustomNodeList, ExtensionNodeMap, GithubStats } from "@app/contracts";
import type { StoredNode } from "./catalog-record.ts";
import { installVersion, versionsOf } from "./versions.ts";

/**
 * ComfyUI-Manager's channel files made from the catalog (one entry per pack not banned; deleted
 * packs are never indexed), so that a Manager whose `default` channel is this service finds the
 * same packs in its list, its missing-node mapping and its stars as in the registry's list.
 */

const served = (packs: readonly StoredNode[]) => packs.filter((p) => p.status !== "NodeStatusBanned");

/** `custom-node-list.json`: each pack installed by cloning its repository, as Manager's own list does. */
export function customNodeList(packs: readonly StoredNode[]): CustomNodeList {
  return {
    custom_nodes: served(packs).map((p) => ({
      author: p.author ?? p.publisher?.name ?? p.publisher?.id ?? "",
      title: p.name ?? p.id,
      id: p.id,
      reference: p.repository ?? "",
      files: p.repository ? [p.repository] : [],
      install_type: "git-clone",
      description: p.description ?? "",
    })),
  };
}

/**
 * `extension-node-map.json`: repository → [the classes the catalog holds for the pack, {title_aux:
 * its name, preemptions}]. Packs without a repository have no key to be found by. Packs sharing
 * one repository are one clone to Manager: the key carries all their classes, under the most
 * popular one's name (the catalog's order).
 */
export function extensionNodeMap(packs: readonly StoredNode[]): ExtensionNodeMap {
  const map: ExtensionNodeMap = {};
  for (const p of served(packs)) {
    if (!p.repository) continue;
    const classes = p.app_node_names ?? [];
    const preempted = p.preempted_app_node_names ?? [];
    const known = map[p.repository];
    if (known) {
      known[0] = [...new Set([...known[0], ...classes])];
      if (preempted.length > 0) known[1].preemptions = [...new Set([...(known[1].preemptions ?? []), ...preempted])];
      continue;
    }
    map[p.repository] = [[...classes], { title_aux: p.name ?? p.id, ...(preempted.length > 0 && { preemptions: [...preempted] }) }];
  }
  return map;
}

const DAY_MS = 86_400_000;

/**
 * `github-stats.json`: the registry's GitHub stars; `last_update` the install-path version's
 * date (else the newest version's, else the pack's), in Manager's `YYYY-MM-DD HH:MM:SS`;
 * `author_account_age_days` a lower bound from what the catalog knows: days since the
 * publisher's `createdAt`, else the pack's `created_at` (its author had an account then).
 * Manager trusts a pack whose author is older than 600 days. Unknown dates give "" and 0.
 */
export function githubStats(packs: readonly StoredNode[], now: number): GithubStats {
  const stats: GithubStats = {};
  for (const p of served(packs)) {
    if (!p.repository || stats[p.repository]) continue;
    const updated = installVersion(p)?.createdAt ?? versionsOf(p)[0]?.createdAt ?? p.created_at;
    const since = Date.parse(p.publisher?.createdAt ?? p.created_at ?? "");
    stats[p.repository] = {
      stars: p.repo_stars ?? 0,
      last_update: updated ? managerDate(updated) : "",
      author_account_age_days: Number.isNaN(since) ? 0 : Math.max(0, Math.floor((now - since) / DAY_MS)),
    };
  }
  return stats;
}

/** `2025-06-01T10:20:30.000Z` → `2025-06-01 10:20:30`, as Manager's own github-stats.json writes dates. */
function managerDate(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? "" : new Date(t).toISOString().slice(0, 19).replace("T", " ");
}
