import { AssetHashInput } from "@app/contracts";
import { ApiFailure } from "./errors.ts";

/**
 * A hash a client sent (`HEAD /api/assets/hash/{hash}`, an upload's `hash` field, tus's `hash`
 * metadata) read by the one hash rule, AssetHashInput (trimmed, lower-cased, then `blake3:` and
 * 64 hex digits): its hex digits, or 400 `INVALID_HASH` in upstream ComfyUI's words.
 */
export function assetHashHex(raw: string): string {
  const value = AssetHashInput.safeParse(raw);
  if (!value.success) throw new ApiFailure("invalid_hash", "hash must be like 'blake3:<hex>'");
  return value.data.slice("blake3:".length);
}
