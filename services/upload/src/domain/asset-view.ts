import type { Asset } from "@app/contracts";
import type { AssetReference } from "./asset-reference.ts";
import { bareMime, isPreviewable } from "./content-type.ts";
import { signedViewUrl } from "./signed-view-url.ts";

/** How `preview_url`s are signed (PREVIEW_URL_SECRET, PREVIEW_URL_TTL_SECONDS). */
export interface PreviewUrls {
  secret: Buffer;
  ttlSeconds: number;
}

/**
 * A record as ComfyUI's asset API answers it. `preview_url`: a signed `/api/view` URL of the
 * nominated preview's content when `preview_id` is set (absent once that record is gone: a URL
 * that would 404 is not promised), else of the asset's own content when a client can show it
 * (image, video, audio, text), else absent. `loader_path` and `display_name` come from the
 * system metadata an upload of new bytes wrote (`fileNames`), and are not repeated in `metadata`.
 */
export async function toAsset(
  ref: AssetReference,
  refs: { get(id: string, owner: string): Promise<AssetReference | null> },
  previews: PreviewUrls,
): Promise<Asset> {
  const hash = `blake3:${ref.hash}`;
  const shown = ref.previewId ? await refs.get(ref.previewId, ref.owner) : ref;
  const previewUrl =
    shown && isPreviewable(shown.mimeType)
      ? signedViewUrl(previews.secret, shown.hash, bareMime(shown.mimeType), previews.ttlSeconds)
      : undefined;
  const { loader_path: loaderPath, display_name: displayName, ...system } = ref.systemMetadata ?? {};
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
    ...(typeof loaderPath === "string" && { loader_path: loaderPath }),
    ...(typeof displayName === "string" && { display_name: displayName }),
    ...(Object.keys(system).length > 0 && { metadata: system }),
    created_at: ref.createdAt,
    updated_at: ref.updatedAt,
    last_access_time: ref.lastAccessTime,
  };
}

/** A file name's extension with its dot (`.safetensors`), or "" when it has none. */
export const extensionOf = (name: string): string => /\.[A-Za-z0-9]{1,16}$/.exec(name)?.[0] ?? "";

/**
 * What an upload of new bytes records for ComfyUI's loaders, as its own upload answers: the
 * file's name (`<hash hex><extension of the uploaded name>`) and, for models, the same under the
 * model category (`checkpoints/<…>`).
 */
export function fileNames(hash: string, uploadedName: string, modelCategory: string | null): { loader_path: string; display_name: string } {
  const file = `${hash}${extensionOf(uploadedName)}`;
  return { loader_path: file, display_name: modelCategory ? `${modelCategory}/${file}` : file };
}
