import { HASH_RE, parseAssetName } from "./naming.ts";
import { ApiFailure } from "./errors.ts";

/**
 * `original_ref` names the image a mask applies to. Accepted forms:
 *  - JSON text `{"filename": "<name>", "subfolder": "...", "type": "..."}`; extra keys are
 *    allowed (clients echo a whole upload result), `filename` wins over `name`, either suffices;
 *  - a plain name `<hash>.<ext>` (optionally with a ` [input]` suffix);
 *  - `blake3:<hex>`.
 * Returns the original's hash; whether it exists is the caller's question.
 */
export function parseOriginalRef(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === "") {
    throw new ApiFailure(
      "invalid_original_ref",
      'original_ref (or originalRef) is required: the name of an uploaded image, JSON {"filename": ...}, or blake3:<hex>',
    );
  }
  const text = raw.trim();
  if (text.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApiFailure("invalid_original_ref", "original_ref is not valid JSON");
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new ApiFailure("invalid_original_ref", "original_ref JSON must be an object");
    }
    const obj = parsed as Record<string, unknown>;
    const candidate = obj.filename ?? obj.name;
    if (typeof candidate !== "string") {
      throw new ApiFailure("invalid_original_ref", "original_ref JSON needs a string 'filename' (or 'name')");
    }
    return hashOfName(candidate);
  }
  return hashOfName(text);
}

/**
 * The original's hash from a mask form: `original_ref`, or `originalRef` as comfy-ui-client
 * 0.1.2 names it. Both may be sent only when they name the same image (in any accepted form).
 */
export function originalRefOfForm(fields: ReadonlyMap<string, string>): string {
  const snake = fields.get("original_ref");
  const camel = fields.get("originalRef");
  if (camel === undefined) return parseOriginalRef(snake);
  if (snake === undefined) return parseOriginalRef(camel);
  const hash = parseOriginalRef(snake);
  if (parseOriginalRef(camel) !== hash) {
    throw new ApiFailure("invalid_original_ref", "original_ref and originalRef name different images; send one of them");
  }
  return hash;
}

function hashOfName(name: string): string {
  if (name.startsWith("blake3:")) {
    const hex = name.slice("blake3:".length);
    if (HASH_RE.test(hex)) return hex;
    throw new ApiFailure("invalid_original_ref", "original_ref blake3: must be followed by 64 lowercase hex digits");
  }
  const parsed = parseAssetName(name);
  if (!parsed) {
    throw new ApiFailure("invalid_original_ref", "original_ref must name an image this service returned (<blake3 hex>.<ext>)");
  }
  return parsed.hash;
}
