import type { Readable } from "node:stream";
import { Blake3Hasher } from "@napi-rs/blake-hash";
import { DataStore, ERRORS, Upload } from "@tus/utils";
import type { PartialUploads } from "@app/blobs";

/** Hashers kept for uploads this process is receiving; past this many the oldest is forgotten (it is hashed again at the end). */
const MAX_HASHERS = 10_000;

/**
 * @tus/server's DataStore over the blob store's partial uploads (creation, creation-with-upload,
 * termination, expiration). Bytes are hashed (blake3) as they arrive, so the last byte needs no
 * second read of a large file when this process took the whole upload. A blake3 hasher cannot be
 * saved, so it lives in this process only: when another replica (or this process before a
 * restart) took part of the upload, `hashOf` answers null and the caller hashes the assembled
 * upload once, reading it back from the store.
 */
export class BlobDataStore extends DataStore {
  private readonly hashers = new Map<string, { hasher: Blake3Hasher; offset: number }>();
  private readonly owners = new WeakMap<Upload, string>();
  /** Bytes the last PATCH of each upload took (the key's byte budget is settled with it). */
  private readonly received = new Map<string, number>();

  constructor(
    readonly partials: PartialUploads,
    private readonly expiryMs: number,
  ) {
    super();
    this.extensions = ["creation", "creation-with-upload", "termination", "expiration"];
  }

  /** The key's principal that is creating `upload` (set by the creation hook, read by `create`). */
  claim(upload: Upload, owner: string): void {
    this.owners.set(upload, owner);
  }

  override async create(upload: Upload): Promise<Upload> {
    const owner = this.owners.get(upload);
    if (owner === undefined || upload.size === undefined) throw new Error("an upload is created with an owner and a length");
    upload.creation_date = new Date().toISOString();
    await this.partials.create({
      id: upload.id,
      size: upload.size,
      metadata: upload.metadata ?? {},
      owner,
      createdAt: upload.creation_date,
    });
    this.remember(upload.id, { hasher: new Blake3Hasher(), offset: 0 });
    return upload;
  }

  override async getUpload(id: string): Promise<Upload> {
    const upload = await this.partials.get(id);
    // @tus/server answers the plain { status_code, body } objects of ERRORS, not Error instances.
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (!upload) throw ERRORS.FILE_NOT_FOUND;
    return new Upload({ id, size: upload.size, offset: upload.offset, metadata: upload.metadata, creation_date: upload.createdAt });
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    let state = this.hashers.get(id);
    if (state?.offset !== offset) {
      // Bytes before `offset` went through another process: only a re-read can hash them.
      state = offset === 0 ? { hasher: new Blake3Hasher(), offset: 0 } : undefined;
      this.hashers.delete(id);
    }
    let seen = 0;
    try {
      const next = await this.partials.append(id, offset, stream, (chunk) => {
        state?.hasher.update(chunk);
        seen += chunk.length;
      });
      this.received.set(id, next - offset);
      if (state && next === offset + seen) this.remember(id, { hasher: state.hasher, offset: next });
      else this.hashers.delete(id);
      return next;
    } catch (err) {
      this.hashers.delete(id);
      this.received.set(id, 0);
      throw err;
    }
  }

  override async remove(id: string): Promise<void> {
    this.forget(id);
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (!(await this.partials.remove(id))) throw ERRORS.FILE_NOT_FOUND;
  }

  override getExpiration(): number {
    return this.expiryMs;
  }

  /** Remove every upload created more than TUS_EXPIRY ago, finished or not (none when it is 0: uploads never expire). */
  override async deleteExpired(now = Date.now()): Promise<number> {
    if (this.expiryMs === 0) return 0;
    const expired = (await this.partials.list()).filter((u) => Date.parse(u.createdAt) + this.expiryMs < now);
    for (const u of expired) {
      this.forget(u.id);
      await this.partials.remove(u.id);
    }
    return expired.length;
  }

  /** The blake3 of a complete upload of `size` bytes whose every byte this process hashed, else null. */
  hashOf(id: string, size: number): string | null {
    const state = this.hashers.get(id);
    this.hashers.delete(id);
    return state?.offset === size ? state.hasher.digest("hex") : null;
  }

  /** How many bytes the last write to `id` took, forgotten once read. */
  takeReceived(id: string): number {
    const n = this.received.get(id) ?? 0;
    this.received.delete(id);
    return n;
  }

  forget(id: string): void {
    this.hashers.delete(id);
    this.received.delete(id);
  }

  private remember(id: string, state: { hasher: Blake3Hasher; offset: number }): void {
    this.hashers.delete(id);
    this.hashers.set(id, state);
    if (this.hashers.size > MAX_HASHERS) this.hashers.delete(this.hashers.keys().next().value!);
  }
}
