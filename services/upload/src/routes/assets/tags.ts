import type { Router } from "express";
import type { TagsList } from "@app/contracts";
import { ownerOf } from "../../http/auth.ts";
import type { AssetRouteContext } from "./context.ts";
import { parseTagsQuery } from "./query.ts";

/** GET /api/tags: the owner's tags with how many of the owner's references carry each. */
export function tagsRoute(router: Router, prefix: string, { deps, access }: AssetRouteContext): void {
  router.get(`${prefix}/tags`, access.read, async (req, res) => {
    const query = parseTagsQuery(req, ownerOf(res));
    const { tags, total } = await deps.references.tagCounts(query);
    const answer: TagsList = { tags, total, has_more: query.offset + tags.length < total };
    res.json(answer);
  });
}
