import { z } from "zod";

/** Upload results (spec sections 2.6, 2.7). */
export const UploadResult = z.object({
  name: z.string(),
  subfolder: z.string(),
  type: z.string(),
});

export const MaskType = z.enum(["alpha", "luminance"]);

export const MaskUploadResult = UploadResult.extend({
  metadata: z.object({
    is_mask: z.literal(true),
    original_hash: z.string(),
    mask_type: MaskType,
    related_files: z.object({
      mask: z.string(),
      paint: z.string(),
      painted: z.string(),
    }),
  }),
});

/** Stable machine-readable upload error codes. */
export const UploadErrorCode = z.enum([
  "unauthorized",
  "missing_image",
  "invalid_image",
  "image_too_large",
  "payload_too_large",
  "invalid_subfolder",
  "invalid_type",
  "malformed_multipart",
  "invalid_original_ref",
  "original_not_found",
  "not_found",
  "invalid_hash",
  "invalid_json",
  "invalid_body",
  "invalid_query",
  "invalid_cursor",
  "asset_not_found",
  "invalid_tag_filter",
  "empty_upload",
  "missing_file",
  "unsupported_media_type",
  "hash_mismatch",
  "not_supported",
  "invalid_range",
  "request_timeout",
  "rate_limited",
  "unavailable",
  "internal",
]);

/** Upload error body: `{code, message}` as the spec says, plus `error` (= code) for clients that only look for it. */
export const UploadError = z.object({
  code: UploadErrorCode,
  message: z.string(),
  error: UploadErrorCode,
});

export type UploadResult = z.infer<typeof UploadResult>;
export type MaskType = z.infer<typeof MaskType>;
export type MaskUploadResult = z.infer<typeof MaskUploadResult>;
export type UploadErrorCode = z.infer<typeof UploadErrorCode>;
export type UploadError = z.infer<typeof UploadError>;
