import { z } from "zod";

/**
 * ComfyUI-Manager's channel files, as its own code reads them (Comfy-Org/ComfyUI-Manager f39cbd5,
 * glob/manager_core.py and glob/manager_server.py): Manager fetches `<channel url>/<file>` for
 * each, and a missing key its code indexes is its crash.
 */

/** One pack in `custom-node-list.json`: `load_nightly` keys it by `files` and `id`. */
export const CustomNodeListEntry = z.object({
  author: z.string(),
  title: z.string(),
  id: z.string(),
  reference: z.string(),
  files: z.array(z.string()),
  install_type: z.literal("git-clone"),
  description: z.string(),
});

export const CustomNodeList = z.object({ custom_nodes: z.array(CustomNodeListEntry) });

/**
 * `extension-node-map.json`: repository URL → [class names, {title_aux, preemptions?}], what
 * "Install Missing Custom Nodes" maps a workflow's classes to packs with.
 */
export const ExtensionNodeMap = z.record(
  z.string(),
  z.tuple([z.array(z.string()), z.object({ title_aux: z.string(), preemptions: z.array(z.string()).optional() })]),
);

/** `github-stats.json`: repository URL → what `populate_github_stats` reads (`trust` = age over 600 days). */
export const GithubStats = z.record(
  z.string(),
  z.object({ stars: z.number().int(), last_update: z.string(), author_account_age_days: z.number().int() }),
);

/** `model-list.json`: models Manager offers to download; this service offers none. */
export const ModelList = z.object({ models: z.array(z.unknown()) });
/** `alter-list.json`: alternatives to packs; none here. */
export const AlterList = z.object({ items: z.array(z.unknown()) });
/** `extras.json`: the list's favourites, read from the `default` channel; none here. */
export const ChannelExtras = z.object({ favorites: z.array(z.string()) });

export type CustomNodeListEntry = z.infer<typeof CustomNodeListEntry>;
export type CustomNodeList = z.infer<typeof CustomNodeList>;
export type ExtensionNodeMap = z.infer<typeof ExtensionNodeMap>;
export type GithubStats = z.infer<typeof GithubStats>;
