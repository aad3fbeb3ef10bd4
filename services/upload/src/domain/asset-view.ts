import type { Asset } from "@app/contracts";
import type { AssetReference } from "./asset-reference.ts";
import { isPreviewable } from "./content-type.ts";

/** Where a client fetches an asset's bytes to show them (behind the key, like every asset route). */
export const inlineContentUrl = (id: string): string => `/api/assets/${id}/content?disposition=inline`;

/**
 * A record as ComfyUI's asset API answers it. `preview_url`: the nominated preview's content
 * when `preview_id` is set (absent once that record is gone: a URL that would 404 is not
 * promised), else the asset's own content when a client can show it (image, video, audio,
 * text), else absent.
 */
export async function toAsset(ref: AssetReference, refs: { get(id: string, owner: string): Promise<AssetReference | null> }): Promise<Asset> {
  const hash = `blake3:${ref.hash}`;
  let previewUrl: string | undefined;
  if (ref.previewId) {
    const preview = await refs.get(ref.previewId, ref.owner);
    if (preview && isPreviewable(preview.mimeType)) previewUrl = inlineContentUrl(preview.id);
  } else if (isPreviewable(ref.mimeType)) {
    previewUrl = inlineContentUrl(ref.id);
  }
  return {
    id: ref.id,
    name: ref.name,
    hash,
    asset_hash: hash,
    size: ref.size,
    mime_type: ref.mimeType,
    tags: ref.tags,
    user_metadata: ref.userMetadata,
    ...(ref.previewId && { preview_id: ref.previewId }),
    ...(previewUrl && { preview_url: previewUrl }),
    ...(ref.systemMetadata && { metadata: ref.systemMetadata }),
    created_at: ref.createdAt,
    updated_at: ref.updatedAt,
    last_access_time: ref.lastAccessTime,
  };
}
