import { z } from "zod";

/**
 * The multipart forms the upload routes take, as the ComfyUI frontend sends them. The routes
 * parse the stream with @fastify/busboy; these schemas describe the same fields for the OpenAPI document.
 */
export const UploadImageForm = z.object({
  image: z.file().describe("The image file. Its format is detected from the bytes, not from the filename."),
  subfolder: z.string().optional().describe("Echoed back; never used for storage. Absolute paths and `..` are refused."),
  type: z.string().optional().describe("Echoed back and kept as a tag on the asset; defaults to `output`."),
  overwrite: z.string().optional().describe("Accepted and ignored: identical content always maps to the same name."),
});

export const UploadMaskForm = UploadImageForm.extend({
  image: z.file().describe("The mask. With an alpha channel, its alpha is applied; without, its luminance (white = masked)."),
  original_ref: z
    .string()
    .optional()
    .describe(
      'Required (this or `originalRef`): the image the mask applies to: JSON text `{"filename","subfolder","type"}` (a whole upload result is fine), a plain name, or `blake3:<hex>`.',
    ),
  originalRef: z
    .string()
    .optional()
    .describe(
      "Alias of `original_ref` (comfy-ui-client 0.1.2 sends this name). Both may be sent only if they name the same image; otherwise 400 `invalid_original_ref`.",
    ),
});

export const ViewQuery = z.object({
  filename: z.string().describe("A name this service returned: `<blake3 hex>.<ext>`, optionally with a ` [type]` suffix."),
  type: z.string().optional(),
  subfolder: z.string().optional(),
});
