import { AssetRecord } from "@app/contracts";
import { HASH_RE } from "./hash.ts";
import { BlobNotFoundError, type RecordUpdate } from "./blob-store.ts";
import { KeyedMutex } from "./keyed-mutex.ts";

/** Where a store keeps the record text of a hash (a file, an object). */
export interface RecordStorage {
  /** The stored text, or null when there is none. */
  read(hash: string): Promise<string | null>;
  write(hash: string, text: string): Promise<void>;
  /** Whether the blob itself is stored: a record is only ever written beside one. */
  blobExists(hash: string): Promise<boolean>;
}

/**
 * The asset records every store keeps beside its blobs: a stored record that no longer parses as
 * an AssetRecord reads as none, and updates are read-modify-write serialised per hash in this
 * process, so concurrent uploads of the same content each merge their tags.
 */
export class AssetRecords {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly storage: RecordStorage) {}

  async get(hash: string): Promise<AssetRecord | null> {
    if (!HASH_RE.test(hash)) return null;
    const text = await this.storage.read(hash);
    if (text === null) return null;
    const parsed = AssetRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  }

  async update(hash: string, update: RecordUpdate): Promise<AssetRecord> {
    return this.mutex.run(hash, async () => {
      if (!(await this.storage.blobExists(hash))) throw new BlobNotFoundError(hash);
      const next = AssetRecord.parse(update(await this.get(hash)));
      await this.storage.write(hash, JSON.stringify(next));
      return next;
    });
  }
}
