import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { formatKeyLimits, isLimitToken, parseKeyLimits, type KeyLimits } from "../../domain/key-limits.ts";

/**
 * API keys, stored only as SHA-256 digests.
 *
 * Key file format (API_KEYS_FILE, default DATA_DIR/api-keys.txt), one key a line:
 *   sha256:<64 hex> <label> [limits]
 * where limits are `name=value` tokens after the label (`upload_rpm=60 upload_mbpm=512
 * assets_rpm=600`, see domain/key-limits.ts); a label never contains `=`. Blank lines and lines
 * starting with `#` are ignored. `API_KEYS` (comma-separated plaintext, for local use and tests)
 * is hashed at boot and the plaintext dropped; those keys have the default limits.
 *
 * A presented key is hashed and compared with every stored digest by `timingSafeEqual` over
 * fixed 32-byte values, without stopping at a match, so timing says nothing about the keys.
 */
export interface ApiKey {
  /** Names the key in rate-limit counters: a prefix of its digest, never the key. */
  id: string;
  label: string;
  limits: KeyLimits;
}

export interface ApiKeys {
  /** The matching key, or null. */
  verify(presented: string): ApiKey | null;
  readonly count: number;
}

export interface KeyEntry extends ApiKey {
  digest: Buffer;
}

/** API_KEYS_FILE, or DATA_DIR/api-keys.txt. */
export function keyFilePath(config: { API_KEYS_FILE?: string | undefined; DATA_DIR: string }): string {
  return config.API_KEYS_FILE ?? join(config.DATA_DIR, "api-keys.txt");
}

export function digestKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

function entry(digest: Buffer, label: string, limits: KeyLimits = {}): KeyEntry {
  return { digest, id: digest.toString("hex").slice(0, 24), label, limits };
}

const LINE_RE = /^sha256:([0-9a-f]{64})(?:\s+(.*))?$/;

export function parseKeyFile(text: string, source = "key file"): KeyEntry[] {
  const entries: KeyEntry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `${source} line ${i + 1}`;
    const m = LINE_RE.exec(line);
    if (!m) throw new Error(`${where}: expected "sha256:<64 hex> <label> [limits]"`);
    const words = (m[2] ?? "").split(/\s+/).filter((w) => w !== "");
    const firstLimit = words.findIndex(isLimitToken);
    const labelWords = firstLimit === -1 ? words : words.slice(0, firstLimit);
    let limits: KeyLimits;
    try {
      limits = parseKeyLimits(firstLimit === -1 ? [] : words.slice(firstLimit));
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}; limits follow the label as name=value`, { cause: err });
    }
    entries.push(entry(Buffer.from(m[1]!, "hex"), labelWords.join(" ") || `line ${i + 1}`, limits));
  });
  return entries;
}

export class HashedApiKeys implements ApiKeys {
  constructor(private readonly entries: KeyEntry[]) {}

  get count(): number {
    return this.entries.length;
  }

  verify(presented: string): ApiKey | null {
    const digest = digestKey(presented);
    let found: KeyEntry | null = null;
    for (const e of this.entries) {
      if (timingSafeEqual(digest, e.digest) && found === null) found = e;
    }
    return found && { id: found.id, label: found.label, limits: found.limits };
  }
}

/** The keys of `API_KEYS` (comma-separated plaintext), hashed. */
export function plaintextEntries(plaintext: string | undefined): KeyEntry[] {
  return (plaintext ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k.length > 0)
    .map((k, i) => entry(digestKey(k), `API_KEYS[${i}]`));
}

/** The key file's entries; a missing file has none. Throws on a malformed file. */
export async function readKeyFile(file: string): Promise<KeyEntry[]> {
  try {
    return parseKeyFile(await readFile(file, "utf8"), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

/** Keys from the file (missing file = none) and from the comma-separated plaintext list. */
export async function loadApiKeys(opts: { file?: string; plaintext?: string }): Promise<HashedApiKeys> {
  const fromFile = opts.file ? await readKeyFile(opts.file) : [];
  return new HashedApiKeys([...fromFile, ...plaintextEntries(opts.plaintext)]);
}

const LABEL_RE = /^[\w .@-]{1,64}$/;

/** A new random key and its key-file line. */
function newKeyLine(label: string, limits: KeyLimits): { key: string; line: string } {
  if (!LABEL_RE.test(label)) throw new Error("label must be 1-64 characters of letters, digits, space, '.', '@', '_' or '-'");
  const key = `crs_${randomBytes(32).toString("base64url")}`;
  const suffix = formatKeyLimits(limits);
  return { key, line: `sha256:${digestKey(key).toString("hex")} ${label}${suffix ? ` ${suffix}` : ""}` };
}

/** A new random key; its digest line is appended to the key file and the plaintext returned once. */
export async function createApiKey(file: string, label: string, limits: KeyLimits = {}): Promise<string> {
  const { key, line } = newKeyLine(label, limits);
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${line}\n`, { mode: 0o600 });
  return key;
}

/**
 * Replace the keys labelled `label` by one new key with the same label and the newest line's
 * limits, in one rename: the old keys stop working at the next reload, and the new one is the
 * same principal, so it keeps the owner's asset records (the owner is the label). For an overlap,
 * `create` a second key with the same label first (both work, one owner), then `rotate`.
 */
export async function rotateApiKey(file: string, label: string): Promise<string | null> {
  const current = (await readKeyFile(file)).filter((e) => e.label === label);
  if (current.length === 0) return null;
  const { key, line } = newKeyLine(label, current.at(-1)!.limits);
  await rewriteKeyFile(file, (kept) => [...kept.filter((l) => l.trim() !== ""), line, ""], label);
  return key;
}

/**
 * Remove every key labelled `label` from the key file; other lines (comments included) stay.
 * The file is replaced in one rename, so a server reloading it never reads half of it.
 */
export async function revokeApiKeys(file: string, label: string): Promise<number> {
  return rewriteKeyFile(file, (kept) => kept, label);
}

/** The key file without `label`'s lines, passed through `edit`, written in one rename; answers how many lines were removed. */
async function rewriteKeyFile(file: string, edit: (kept: string[]) => string[], label: string): Promise<number> {
  const text = await readFile(file, "utf8");
  const byLine = new Map(parseKeyFile(text, file).map((e) => [e.digest.toString("hex"), e.label]));
  let removed = 0;
  const kept = text.split(/\r?\n/).filter((raw) => {
    const m = LINE_RE.exec(raw.trim());
    if (m && byLine.get(m[1]!) === label) {
      removed++;
      return false;
    }
    return true;
  });
  if (removed > 0) {
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, edit(kept).join("\n"), { mode: 0o600 });
    await rename(tmp, file);
  }
  return removed;
}
