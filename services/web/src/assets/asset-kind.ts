import type { Asset } from "@app/contracts";

/** Raster images only: an SVG is never rendered from the store (the API sends it as a download). */
export const isPicture = (mime: string): boolean => /^image\/(png|jpeg|webp|gif|avif|bmp)$/.test(mime);

/** Text a browser can show as it is: a preview reads its first bytes. */
export const isText = (mime: string): boolean => /^text\/|^application\/(json|xml|yaml|x-yaml|toml|javascript)\b|\+json$|\+xml$/.test(mime);

/** What a file icon says: the kind of content, from its MIME type. */
export function kindOf(mime: string, name = ""): string {
  const ext = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1).toLowerCase() : "";
  const [type, sub = ""] = mime.split("/");
  if (mime === "application/octet-stream") return ext && ext.length <= 12 ? ext : "file";
  if (type === "video" || type === "audio" || type === "text") return type;
  if (type === "image") return sub.replace(/\+xml$/, "");
  return sub.split(/[.+-]/).pop() ?? "file";
}

/** The content-addressed name the store gave the bytes (`<blake3>.<ext>`), recorded in user_metadata. */
export function storedFileName(a: Asset): string | undefined {
  const f = a.user_metadata.filename;
  return typeof f === "string" ? f : undefined;
}

/** The first 12 hex digits of the hash: enough to tell contents apart on a card. */
export const shortHash = (hash: string): string => hash.replace(/^blake3:/, "").slice(0, 12);
