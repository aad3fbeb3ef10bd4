import type { Request, Response } from "express";
import type { ReferenceStore } from "../../adapters/references/reference-store.ts";
import type { AssetReference } from "../../domain/asset-reference.ts";
import { normaliseAssetId } from "../../domain/asset-cursor.ts";
import { ApiFailure } from "../../domain/errors.ts";
import { ownerOf } from "../../http/auth.ts";

/** 404 `ASSET_NOT_FOUND`, as ComfyUI words it. */
export const assetNotFound = (id: string): ApiFailure =>
  new ApiFailure("asset_not_found", `AssetReference ${id.slice(0, 100)} not found`, { details: { id: id.slice(0, 100) } });

/**
 * The key's owner's reference named by `:id`, or 404 (another owner's is not found either).
 * `touching`: its content is about to be read, so last_access_time moves in the same statement.
 */
export async function findAsset(
  references: ReferenceStore,
  req: Request,
  res: Response,
  opts: { touching?: boolean } = {},
): Promise<AssetReference> {
  const raw = String(req.params.id ?? "");
  const id = normaliseAssetId(raw);
  const ref = id ? await (opts.touching ? references.touch(id, ownerOf(res)) : references.get(id, ownerOf(res))) : null;
  if (!ref) throw assetNotFound(raw);
  return ref;
}
