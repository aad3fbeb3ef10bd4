import type { StagedBlob } from "@app/blobs";
import { probeImage, type ImageInfo } from "../../adapters/probes/image-probe.ts";
import { ApiFailure } from "../../domain/errors.ts";
import type { ParsedUpload } from "../../http/multipart.ts";
import type { StoredContent } from "../../library/reference-fields.ts";

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
