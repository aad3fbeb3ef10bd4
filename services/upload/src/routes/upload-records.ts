import { MAX_TAG_LENGTH } from "@app/contracts";
import { metrics } from "@app/platform";
import type { StagedBlob } from "../adapters/blob-store.ts";
import type { ImageInfo } from "../adapters/image-probe.ts";
import type { AssetReference } from "../adapters/reference-store.ts";
import { mergeRecord } from "../domain/asset-record.ts";
import { formatFromExt, parseAssetName } from "../domain/naming.ts";
import type { UploadDeps } from "./deps.ts";

/** What the asset API shows of an upload: one record per bytes, route, type and subfolder. */
export interface UploadRecord {
  /** Which upload made it (`upload:<type>:<subfolder>`, `mask:…`, `derived:…`): a re-upload finds its record again. */
  origin: string;
  tags: string[];
  systemMetadata?: Record<string, unknown>;
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
  info: ImageInfo,
  blobTags: string[],
  record: UploadRecord,
): Promise<AssetReference> {
  return deps.refs.withHashLock(image.hash, async () => {
    const { created } = await image.commit((existing) =>
      mergeRecord(existing, {
        hash: image.hash,
        ext: info.format.ext,
        mime: info.format.mime,
        size: image.size,
        width: info.width,
        height: info.height,
        tags: blobTags,
      }),
    );
    (created ? metrics.uploadsStored : metrics.dedupHits).inc();
    const { reference } = await deps.refs.create({
      hash: image.hash,
      name: `${image.hash}.${info.format.ext}`,
      size: image.size,
      mimeType: info.format.mime,
      tags: record.tags,
      ...(record.systemMetadata && { systemMetadata: record.systemMetadata }),
      origin: record.origin,
    });
    return reference;
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
      hash: parsed.hash,
      name: `${parsed.hash}.${parsed.ext}`,
      size: stat.size,
      mimeType: formatFromExt(parsed.ext)?.mime ?? "application/octet-stream",
      tags: record.tags,
      ...(record.systemMetadata && { systemMetadata: record.systemMetadata }),
      origin: record.origin,
    });
  });
}
