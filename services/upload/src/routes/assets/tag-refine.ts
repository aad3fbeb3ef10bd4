import type { Router } from "express";
import type { TagHistogram } from "@app/contracts";
import { ownerOf } from "../../http/auth.ts";
import type { AssetRouteContext } from "./context.ts";
import { parseRefineQuery } from "./query.ts";

/** GET /api/assets/tags/refine: how many of the filtered references carry each tag. */
export function tagRefineRoute(router: Router, prefix: string, { deps, access }: AssetRouteContext): void {
  router.get(`${prefix}/assets/tags/refine`, access.read, async (req, res) => {
    const { filter, limit } = parseRefineQuery(req, ownerOf(res));
    const counts = await deps.references.tagHistogram(filter, limit);
    const answer: TagHistogram = { tag_counts: Object.fromEntries(counts.map((c) => [c.name, c.count])) };
    res.json(answer);
  });
}
