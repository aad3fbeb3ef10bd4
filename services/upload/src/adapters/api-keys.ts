import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * API keys, stored only as SHA-256 digests.
 *
 * Key file format (API_KEYS_FILE, default DATA_DIR/api-keys.txt), one key a line:
 *   sha256:<64 hex> <label>
 * Blank lines and lines starting with `#` are ignored. `API_KEYS` (comma-separated plaintext,
 * for local use and tests) is hashed at boot and the plaintext dropped.
 *
 * A presented key is hashed and compared with every stored digest by `timingSafeEqual` over
 * fixed 32-byte values, without stopping at a match, so timing says nothing about the keys.
 */
export interface ApiKeys {
  /** The label of the matching key, or null. */
  verify(presented: string): string | null;
  readonly count: number;
}

interface Entry {
  digest: Buffer;
  label: string;
}

const LINE_RE = /^sha256:([0-9a-f]{64})(?:\s+(.*))?$/;

export function digestKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

export function parseKeyFile(text: string, source = "key file"): Entry[] {
  const entries: Entry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const m = LINE_RE.exec(line);
    if (!m) throw new Error(`${source} line ${i + 1}: expected "sha256:<64 hex> <label>"`);
    entries.push({ digest: Buffer.from(m[1]!, "hex"), label: m[2]?.trim() || `line ${i + 1}` });
  });
  return entries;
}

export class HashedApiKeys implements ApiKeys {
  constructor(private readonly entries: Entry[]) {}

  get count(): number {
    return this.entries.length;
  }

  verify(presented: string): string | null {
    const digest = digestKey(presented);
    let found: string | null = null;
    for (const e of this.entries) {
      if (timingSafeEqual(digest, e.digest) && found === null) found = e.label;
    }
    return found;
  }
}

/** Keys from the file (missing file = none) and from the comma-separated plaintext list. */
export async function loadApiKeys(opts: { file?: string; plaintext?: string }): Promise<HashedApiKeys> {
  const entries: Entry[] = [];
  if (opts.file) {
    try {
      entries.push(...parseKeyFile(await readFile(opts.file, "utf8"), opts.file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  (opts.plaintext ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k.length > 0)
    .forEach((k, i) => entries.push({ digest: digestKey(k), label: `API_KEYS[${i}]` }));
  return new HashedApiKeys(entries);
}

/** A new random key; its digest line is appended to the key file and the plaintext returned once. */
export async function createApiKey(file: string, label: string): Promise<string> {
  if (!/^[\w .@-]{1,64}$/.test(label)) throw new Error("label must be 1-64 characters of letters, digits, space, '.', '@', '_' or '-'");
  const key = `crs_${randomBytes(32).toString("base64url")}`;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `sha256:${digestKey(key).toString("hex")} ${label}\n`, { mode: 0o600 });
  return key;
}
