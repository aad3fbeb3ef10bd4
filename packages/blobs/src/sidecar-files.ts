import { Sidecar } from "./sidecar.ts";
import { HASH_RE } from "./hash.ts";
import { BlobNotFoundError, type SidecarUpdate } from "./blob-store.ts";
import { KeyedMutex } from "./keyed-mutex.ts";

/** Where a store keeps the sidecar text of a hash (a file, an object). */
export interface SidecarStorage {
  /** The stored text, or null when there is none. */
  read(hash: string): Promise<string | null>;
  write(hash: string, text: string): Promise<void>;
  /** Whether the blob itself is stored: a sidecar is only ever written beside one. */
  blobExists(hash: string): Promise<boolean>;
}

/**
 * The sidecars every store keeps beside its blobs: a stored sidecar that no longer parses as
 * a Sidecar reads as none, and updates are read-modify-write serialised per hash in this
 * process, so concurrent uploads of the same content each merge their tags.
 */
export class SidecarFiles {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly storage: SidecarStorage) {}

  async get(hash: string): Promise<Sidecar | null> {
    if (!HASH_RE.test(hash)) return null;
    const text = await this.storage.read(hash);
    if (text === null) return null;
    const parsed = Sidecar.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  }

  async update(hash: string, update: SidecarUpdate): Promise<Sidecar> {
    return this.mutex.run(hash, async () => {
      if (!(await this.storage.blobExists(hash))) throw new BlobNotFoundError(hash);
      const next = Sidecar.parse(update(await this.get(hash)));
      await this.storage.write(hash, JSON.stringify(next));
      return next;
    });
  }
}
