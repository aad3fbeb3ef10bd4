import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { UploadImageForm, UploadMaskForm, ViewQuery } from "../forms.ts";
import { binary, errorsOf, json, rateLimited, security } from "./components.ts";

/** A form's file field: bytes, which JSON Schema (and so zod-to-openapi) has no type of its own for. */
const withFile = (form: z.ZodObject, field: string) =>
  form.extend({ [field]: (form.shape[field] as z.ZodType).meta({ type: "string", contentMediaType: "application/octet-stream" }) });

const maskErrors = {
  "404": "The original image is unknown.",
  "503": "The derivative job did not finish in time or the queue is down; retrying is safe.",
};

function registerUpload(
  registry: OpenAPIRegistry,
  path: string,
  operationId: string,
  form: z.ZodObject,
  result: "UploadResult" | "MaskUploadResult",
  extraErrors: Record<string, string>,
): void {
  registry.registerPath({
    method: "post",
    path,
    operationId,
    tags: ["Upload"],
    security,
    request: { body: { required: true, content: { "multipart/form-data": { schema: withFile(form, "image") } } } },
    responses: {
      "200": json(result, "Stored (or already stored: identical content, same name)."),
      ...errorsOf("UploadError", {
        "400": "Bad input: missing image part, not an image, too many pixels, bad subfolder, malformed multipart.",
        "401": "Missing or unknown API key.",
        "413": "Body over the upload size limit, or over the key's whole upload bytes per minute; nothing stored.",
        ...extraErrors,
      }),
      ...rateLimited,
    },
  });
}

function registerView(registry: OpenAPIRegistry, path: string, operationId: string): void {
  registry.registerPath({
    method: "get",
    path,
    operationId,
    tags: ["Upload"],
    security,
    request: { query: ViewQuery },
    responses: {
      "200": {
        description: "The bytes, with ETag = the hash and an immutable Cache-Control.",
        content: { "image/*": { schema: binary() } },
      },
      "206": { description: "The requested byte range." },
      "304": { description: "Not modified (If-None-Match matched the ETag)." },
      ...errorsOf("UploadError", {
        "400": "A filename that is not a stored asset's name.",
        "401": "Missing or unknown API key.",
        "404": "No such asset.",
        "416": "Unsatisfiable range.",
      }),
      ...rateLimited,
    },
  });
}

/** ComfyUI's upload and view routes, with and without the /api prefix. */
export function registerUploadRoutes(registry: OpenAPIRegistry): void {
  for (const [prefix, suffix] of [
    ["/api", ""],
    ["", "Comfy"],
  ] as const) {
    registerUpload(registry, `${prefix}/upload/image`, `UploadImage${suffix}`, UploadImageForm, "UploadResult", {});
    registerUpload(registry, `${prefix}/upload/mask`, `UploadMask${suffix}`, UploadMaskForm, "MaskUploadResult", maskErrors);
    registerView(registry, `${prefix}/view`, `ViewAsset${suffix}`);
  }
}
