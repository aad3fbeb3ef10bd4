import type { Router } from "express";
import type { AssetsList } from "@app/contracts";
import { sortValue } from "../../domain/asset-reference.ts";
import { encodeCursor } from "../../domain/asset-cursor.ts";
import { toAsset } from "../../domain/asset-view.ts";
import { ownerOf } from "../../http/auth.ts";
import type { AssetRouteContext } from "./context.ts";
import { parseListQuery } from "./query.ts";

/** GET /api/assets: the owner's references, filtered, sorted, by offset or cursor. */
export function listRoute(router: Router, prefix: string, { deps, access }: AssetRouteContext): void {
  const { references } = deps;
  router.get(`${prefix}/assets`, access.read, async (req, res) => {
    const query = parseListQuery(req, ownerOf(res));
    const page = await references.list(query);
    const last = page.items.at(-1);
    const answer: AssetsList = {
      assets: await Promise.all(page.items.map((ref) => toAsset(ref, references, deps.settings.previewUrls))),
      total: page.total,
      // A cursor page knows whether more follow; an offset page counts (both agree here, the page is read one past its limit).
      has_more: query.after ? page.hasMore : query.offset + page.items.length < page.total,
      ...(page.hasMore &&
        last && { next_cursor: encodeCursor(query.sort, query.order, { value: sortValue(last, query.sort), id: last.id }) }),
    };
    res.json(answer);
  });
}
