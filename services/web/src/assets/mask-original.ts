import type { Asset } from "@app/contracts";
import { contentUrl, getAsset, viewUrl } from "../api/assets.ts";

/** The image a mask is painted on: where its bytes are read, and how the mask upload names it. */
export interface MaskOriginal {
  label: string;
  /** Fetched with the key header. */
  source: string;
  /** `original_ref` as /upload/mask reads it: `blake3:<hex>`, or ComfyUI's `{filename, subfolder, type}`. */
  ref: string;
  subfolder: string;
}

export function originalOfAsset(a: Asset): MaskOriginal {
  const subfolder = typeof a.user_metadata.subfolder === "string" ? a.user_metadata.subfolder : "";
  return { label: a.name, source: contentUrl(a.id), ref: a.hash, subfolder };
}

/**
 * /ui/mask?asset=<id> (any image in the store), or the older /ui/mask?name=&subfolder=&type= of
 * an /upload/image result; null when the address names no image.
 */
export async function originalFromParams(params: URLSearchParams, key: string): Promise<MaskOriginal | null> {
  const id = params.get("asset");
  if (id) return originalOfAsset(await getAsset(id, key));
  const name = params.get("name");
  if (!name) return null;
  const subfolder = params.get("subfolder") ?? "";
  const type = params.get("type") ?? "input";
  return { label: name, source: viewUrl(name), ref: JSON.stringify({ filename: name, subfolder, type }), subfolder };
}
