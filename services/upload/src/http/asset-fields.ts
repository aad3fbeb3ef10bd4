import { UploadAssetFields } from "@app/contracts";
import { assetHashHex } from "../domain/asset-hash.ts";
import { ApiFailure } from "../domain/errors.ts";
import { describeIssue } from "./json-body.ts";
import type { ParsedUpload } from "./multipart.ts";

/** `hash` as sent, or null when empty; 400 `INVALID_HASH` when it is not blake3 (assetHashHex). */
export function providedHash(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === "") return null;
  return assetHashHex(raw);
}

/** `tags` fields, each a JSON array or comma-separated, merged in order, duplicates dropped. */
function tagsOf(values: string[]): string[] {
  const tags: string[] = [];
  for (const value of values) {
    const text = value.trim();
    let items: unknown[] | null = null;
    if (text.startsWith("[")) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (Array.isArray(parsed)) items = parsed;
      } catch {
        // not JSON: read as comma-separated, as ComfyUI does
      }
    }
    for (const item of items ?? text.split(",")) {
      if (typeof item !== "string") throw new ApiFailure("invalid_body", "tags: must be strings");
      if (item.trim() !== "") tags.push(item);
    }
  }
  return tags;
}

function userMetadataOf(raw: string | undefined): unknown {
  if (raw === undefined || raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new ApiFailure("invalid_body", `user_metadata must be JSON: ${(err as Error).message}`);
  }
}

/**
 * An asset upload's text fields (POST /api/assets' form, a tus upload's Upload-Metadata),
 * validated as ComfyUI's UploadAssetSpec (400 `INVALID_BODY` naming the field).
 */
export function fieldsOf(parsed: Pick<ParsedUpload, "fields" | "lists">): UploadAssetFields {
  const name = parsed.fields.get("name");
  const mime = parsed.fields.get("mime_type")?.trim();
  const preview = parsed.fields.get("preview_id")?.trim();
  const result = UploadAssetFields.safeParse({
    tags: [...new Set(tagsOf(parsed.lists.get("tags") ?? []).map((t) => t.trim()))],
    ...(name?.trim() && { name }),
    user_metadata: userMetadataOf(parsed.fields.get("user_metadata")),
    ...(mime && { mime_type: mime }),
    ...(preview && { preview_id: preview }),
  });
  if (!result.success) throw new ApiFailure("invalid_body", describeIssue(result.error));
  if (result.data.tags.length === 0) throw new ApiFailure("invalid_body", "tags: must be provided and non-empty");
  return result.data;
}
