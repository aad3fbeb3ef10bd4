import { ApiFailure } from "./errors.ts";

/**
 * `subfolder` is only echoed, never used for storage, but it is refused where the local
 * ComfyUI API refuses it (absolute or climbing out) so clients see the same behaviour.
 */
export function validateSubfolder(raw: string | undefined): string {
  const value = raw ?? "";
  if (value.includes("\0")) throw new ApiFailure("invalid_subfolder", "subfolder must not contain NUL bytes");
  if (value.length > 1024) throw new ApiFailure("invalid_subfolder", "subfolder is longer than 1024 characters");
  const normalised = value.replace(/\\/g, "/");
  if (normalised.startsWith("/") || /^[A-Za-z]:/.test(normalised)) {
    throw new ApiFailure("invalid_subfolder", "subfolder must be a relative path");
  }
  if (normalised.split("/").some((seg) => seg === "..")) {
    throw new ApiFailure("invalid_subfolder", "subfolder must not contain '..'");
  }
  return value;
}

const TYPE_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** `type` becomes a tag on the asset record, so it is kept short and plain. */
export function validateType(raw: string | undefined): string {
  if (raw === undefined || raw === "") return "output";
  if (!TYPE_RE.test(raw)) {
    throw new ApiFailure("invalid_type", "type must be 1-64 characters of letters, digits, '_', '.' or '-' (e.g. input, output, temp)");
  }
  return raw;
}
