import { appendFile, mkdir, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";

/** One stored archive: which pack version, the blob that holds it, and its digests taken at ingest. */
export interface ArchiveEntry {
  id: string;
  version: string;
  /** The blob's name in the store. */
  blake3: string;
  /** Base64 SHA-256 of the whole archive (what `Repr-Digest` carries). */
  sha256: string;
  size: number;
  storedAt: string;
}

const key = (id: string, version: string) => `${id}\u0000${version}`;

/** A value read from a file (the index, a bundle) that has an entry's every field. */
export function isArchiveEntry(e: unknown): e is ArchiveEntry {
  const o = e as Partial<ArchiveEntry> | null;
  return (
    !!o &&
    typeof o.id === "string" &&
    typeof o.version === "string" &&
    typeof o.blake3 === "string" &&
    /^[0-9a-f]{64}$/.test(o.blake3) &&
    typeof o.sha256 === "string" &&
    Number.isInteger(o.size)
  );
}

/**
 * Which pack version is which stored blob: an append-only NDJSON file under DATA_DIR
 * (`search/archives.ndjson`), held in memory and read again when another process (a replica on
 * the same DATA_DIR, an import) has appended to it. A line that does not parse is skipped; a
 * later line for the same version wins.
 */
export class ArchiveIndex {
  private readonly entries = new Map<string, ArchiveEntry>();
  private readBytes = -1;

  constructor(readonly path: string) {}

  /** Entries known now, without reading the file again. */
  get size(): number {
    return this.entries.size;
  }

  async get(id: string, version: string): Promise<ArchiveEntry | undefined> {
    const hit = this.entries.get(key(id, version));
    if (hit) return hit;
    await this.refresh();
    return this.entries.get(key(id, version));
  }

  async add(entry: ArchiveEntry): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    await appendFile(this.path, `${JSON.stringify(entry)}\n`);
    this.entries.set(key(entry.id, entry.version), entry);
  }

  /** Every entry, after reading what others appended. */
  async all(): Promise<ArchiveEntry[]> {
    await this.refresh();
    return [...this.entries.values()];
  }

  /** Reads the file again when its size changed since the last read. */
  async refresh(): Promise<void> {
    const size = await stat(this.path).then(
      (s) => s.size,
      () => 0,
    );
    if (size === this.readBytes) return;
    const text = await readFile(this.path, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      try {
        const e: unknown = JSON.parse(line);
        if (isArchiveEntry(e)) this.entries.set(key(e.id, e.version), e);
      } catch {
        // A torn last line (a writer killed mid-append) is read again once it is whole.
      }
    }
    this.readBytes = Buffer.byteLength(text);
  }
}
