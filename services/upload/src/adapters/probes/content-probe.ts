import { fileTypeFromBuffer } from "file-type";
import { lookup as mimeOfExtension } from "mime-types";
import sharp from "sharp";
import { extensionOf } from "../../domain/asset-view.ts";
import { bareMime } from "../../domain/content-type.ts";
import { formatFromSharp } from "../../domain/naming.ts";

/** What stored bytes are, as the asset API records them: from the bytes first, from the uploaded name only when they say nothing. */
export interface ContentInfo {
  ext: string;
  mime: string;
  /** Images sharp can read the header of. */
  width?: number;
  height?: number;
}

const OCTET_STREAM: ContentInfo = { ext: "bin", mime: "application/octet-stream" };

/**
 * Sniffs the first bytes (the multipart parser keeps 1 MiB): a format `file-type` knows by its
 * signature (images, video, audio, archives, fonts, …), then text (UTF-8 without binary control characters): SVG,
 * HTML or plain; anything else is `application/octet-stream` (model weights such as
 * safetensors have no signature). Raster images are probed by sharp for their dimensions from
 * the header only (`input`: the staged file when the store has one, else the head).
 * When the bytes say nothing, `declared` (the client's `mime_type`) names the type, else the
 * extension of the uploaded `name`, as ComfyUI's `mimetypes.guess_type` does (`x.png` whose
 * bytes no probe reads is still `image/png`: a preview then, served with `nosniff`).
 */
export async function probeContent(head: Buffer, input: string | Buffer, declared?: string, name?: string): Promise<ContentInfo> {
  const sniffed = await fileTypeFromBuffer(head).catch(() => undefined);
  if (sniffed) {
    const info: ContentInfo = { ext: sniffed.ext, mime: sniffed.mime };
    return sniffed.mime.startsWith("image/") ? { ...info, ...(await dimensions(input)) } : info;
  }
  const text = textKind(head);
  if (text) return text;
  if (declared) return { ext: "bin", mime: bareMime(declared) };
  return (name && fromExtension(name)) || OCTET_STREAM;
}

/** The type a file name's extension names (mime-db, case-insensitive), with that extension; null when it names none. */
function fromExtension(name: string): ContentInfo | null {
  const ext = extensionOf(name).slice(1).toLowerCase();
  const mime = ext ? mimeOfExtension(ext) : false;
  return ext && mime ? { ext, mime } : null;
}

async function dimensions(input: string | Buffer): Promise<{ width?: number; height?: number }> {
  try {
    const meta = await sharp(input, { limitInputPixels: false }).metadata();
    if (!formatFromSharp(meta.format, meta.compression) || !meta.width || !meta.height) return {};
    return { width: meta.width, height: meta.height };
  } catch {
    return {};
  }
}

/** Control characters text does not hold (tab, newlines, form feed and escape aside). */
const BINARY_CONTROL = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/;

function textKind(head: Buffer): ContentInfo | null {
  if (head.includes(0)) return null;
  let text: string;
  try {
    // Streaming mode: a head cut inside a multi-byte character is not held against it.
    text = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
  } catch {
    return null;
  }
  if (BINARY_CONTROL.test(text)) return null;
  const start = text.slice(0, 1024).trimStart().toLowerCase();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg[\s>]/.test(start))
    return { ext: "svg", mime: "image/svg+xml" };
  if (/^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>]|<script[\s>])/.test(start)) return { ext: "html", mime: "text/html" };
  if (start.startsWith("<?xml")) return { ext: "xml", mime: "application/xml" };
  return { ext: "txt", mime: "text/plain" };
}
