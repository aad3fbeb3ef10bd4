import { createHash } from "node:crypto";
import { zipSync } from "fflate";

/**
 * The node archives a fake registry (and the demo catalog) serves: a real zip per pack and version, the same bytes on
 * every call (fixed timestamps, contents derived from `<id>@<version>` only), shaped as a
 * registry node pack is (`pyproject.toml` with `[project] name/version`, which ComfyUI-Manager's
 * `read_cnr_info` reads back after an install, and an `__init__.py`), plus a few KiB that differ
 * per version so two archives never share bytes.
 */
const FIXED_MTIME = new Date("2025-01-01T00:00:00Z");
const cache = new Map<string, Buffer>();

export function archiveBytes(id: string, version: string): Buffer {
  const key = `${id}@${version}`;
  let zip = cache.get(key);
  if (zip) return zip;
  const text = (s: string) => new TextEncoder().encode(s);
  const files = {
    "pyproject.toml": text(
      `[project]\nname = "${id}"\nversion = "${version}"\n\n[project.urls]\nRepository = "https://github.com/example/${id}"\n`,
    ),
    "__init__.py": text(`NODE_CLASS_MAPPINGS = {}\nNODE_DISPLAY_NAME_MAPPINGS = {}\n# ${key}\n`),
    "data/payload.bin": payload(key, 4096 + (hashOf(key).readUInt16BE(0) % 8192)),
  };
  zip = Buffer.from(zipSync(files, { mtime: FIXED_MTIME, level: 6 }));
  cache.set(key, zip);
  return zip;
}

/** The archive's SHA-256 as `Repr-Digest` carries it (RFC 9530): `sha-256=:<base64>:`. */
export function archiveReprDigest(id: string, version: string): string {
  return `sha-256=:${createHash("sha256").update(archiveBytes(id, version)).digest("base64")}:`;
}

function hashOf(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** Pseudo-random bytes from a seed: poorly compressible, so an archive's size is about its payload. */
function payload(seed: string, size: number): Uint8Array {
  const out = Buffer.alloc(size);
  let block = hashOf(seed);
  for (let i = 0; i < size; i += block.length) {
    block.copy(out, i);
    block = hashOf(block.toString("hex"));
  }
  return out;
}
