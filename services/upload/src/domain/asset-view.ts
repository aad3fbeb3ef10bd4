import type { Asset } from "@app/contracts";
import type { AssetReference } from "../adapters/reference-store.ts";

/** A record as ComfyUI's asset API answers it. */
export function toAsset(ref: AssetReference): Asset {
  const hash = `blake3:${ref.hash}`;
  return {
    id: ref.id,
    name: ref.name,
    hash,
    asset_hash: hash,
    size: ref.size,
    mime_type: ref.mimeType,
    tags: ref.tags,
    user_metadata: ref.userMetadata,
    ...(ref.systemMetadata && { metadata: ref.systemMetadata }),
    created_at: ref.createdAt,
    updated_at: ref.updatedAt,
  };
}
