import type { Request, Response } from "express";
import type { StagedBlob } from "@app/blobs";
import { probeImage, type ImageInfo } from "../../adapters/probes/image-probe.ts";
import { ApiFailure } from "../../domain/errors.ts";
import type { UploadDeps } from "../../http/deps.ts";
import { parseMultipart, type ParsedUpload } from "../../http/multipart.ts";
import { byteBudgetOf } from "../../http/rate-limit.ts";
import type { StoredContent } from "../../library/reference-fields.ts";

/** Read the upload form (under UPLOAD_MAX_BYTES and the key's byte budget), let `handle` answer it, then drop the staged image unless it was committed. */
export async function withUploadForm(
  req: Request,
  res: Response,
  deps: UploadDeps,
  handle: (parsed: ParsedUpload) => Promise<void>,
): Promise<void> {
  const parsed = await parseMultipart(req, deps.blobs, deps.settings, byteBudgetOf(res));
  try {
    await handle(parsed);
  } finally {
    await parsed.file?.discard();
  }
}

/** The form's `image` file part; 400 `missing_image` naming a text field of that name. */
export function requireImage(parsed: ParsedUpload): StagedBlob {
  if (parsed.file) return parsed.file;
  const asField = parsed.fields.has("image") ? " ('image' was sent as a text field, not a file)" : "";
  throw new ApiFailure("missing_image", `the multipart body has no 'image' file part${asField}`);
}

/** The image's format and size from its header (the store's local file, or the bytes kept in memory). */
export function probe(parsed: ParsedUpload, image: StagedBlob): Promise<ImageInfo> {
  if (image.size === 0) throw new ApiFailure("invalid_image", "the image part is empty");
  return probeImage(image.localPath ?? parsed.head);
}

export const storedImage = (info: ImageInfo): StoredContent => ({ ...info.format, width: info.width, height: info.height });
