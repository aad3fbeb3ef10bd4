import { MAX_TAG_LENGTH } from "@app/contracts";
import { metrics } from "@app/platform";
import type { StagedBlob } from "@app/blobs";
import type { AssetReference } from "../domain/asset-reference.ts";
import { mergeRecord } from "../domain/asset-record.ts";
import { formatFromExt, parseAssetName } from "../domain/naming.ts";
import type { UploadDeps } from "./deps.ts";

/** What the asset API shows of an upload: one record per bytes, route, type and subfolder. */
export interface UploadRecord {
  /** The key's principal the record belongs to. */
  owner: string;
  /**
   * Which upload made it (`upload:<type>:<subfolder>`, `mask:…`, `derived:…`): a re-upload finds
   * its record again. None (the asset API's POST): every upload makes a record of its own.
   */
  origin?: string;
  tags: string[];
  /** The record's name (default `<hash>.<ext>`). */
  name?: string;
  userMetadata?: Record<string, unknown>;
  systemMetadata?: Record<string, unknown>;
  previewId?: string;
}

/** What the bytes are, as their sidecar record keeps it (an image probe, or the asset API's content probe). */
export interface StoredContent {
  ext: string;
  mime: string;
  width?: number;
  height?: number;
}

/** The upload's tags as the asset API keeps them (trimmed, lower-case, no empty or over-long one). */
export function uploadTags(...tags: string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t.length > 0 && t.length <= MAX_TAG_LENGTH))];
}

export const uploadOrigin = (route: "upload" | "mask" | "derived", type: string, subfolder: string): string => `${route}:${type}:${subfolder}`;

/**
 * Publish staged bytes, merge their sidecar record and make (or find) the asset record, as one
 * step under the hash lock: deleting the last record of the same bytes cannot slip in between
 * and remove bytes this upload has just been told are stored.
 */
export async function commitWithRecord(
  deps: UploadDeps,
  image: StagedBlob,
  info: StoredContent,
  blobTags: string[],
  record: UploadRecord,
): Promise<{ reference: AssetReference; bytesCreated: boolean }> {
  return deps.refs.withHashLock(image.hash, async () => {
    const { created, record: stored } = await image.commit((existing) =>
      mergeRecord(existing, {
        hash: image.hash,
        ext: info.ext,
        mime: info.mime,
        size: image.size,
        ...(info.width && info.height && { width: info.width, height: info.height }),
        tags: blobTags,
      }),
    );
    (created ? metrics.uploadsStored : metrics.dedupHits).inc();
    // Known bytes keep what their first upload recorded them as.
    const { reference } = await deps.refs.create({
      owner: record.owner,
      hash: image.hash,
      name: record.name ?? `${image.hash}.${stored.ext}`,
      size: image.size,
      mimeType: stored.mime,
      tags: record.tags,
      ...(record.userMetadata && { userMetadata: record.userMetadata }),
      ...(record.systemMetadata && { systemMetadata: record.systemMetadata }),
      ...(record.previewId && { previewId: record.previewId }),
      ...(record.origin && { origin: record.origin }),
    });
    return { reference, bytesCreated: created };
  });
}

/** A record for a derivative the mask job stored (under `name`), unless its bytes are gone. */
export async function recordStoredAsset(deps: UploadDeps, name: string, record: UploadRecord): Promise<void> {
  const parsed = parseAssetName(name);
  if (!parsed) return;
  await deps.refs.withHashLock(parsed.hash, async () => {
    const stat = await deps.store.stat(parsed.hash);
    if (!stat) return;
    await deps.refs.create({
      owner: record.owner,
      hash: parsed.hash,
      name: `${parsed.hash}.${parsed.ext}`,
      size: stat.size,
      mimeType: formatFromExt(parsed.ext)?.mime ?? "application/octet-stream",
      tags: record.tags,
      ...(record.systemMetadata && { systemMetadata: record.systemMetadata }),
      ...(record.origin && { origin: record.origin }),
    });
  });
}
