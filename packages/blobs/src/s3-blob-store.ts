import { Readable } from "node:stream";
import { Blake3Hasher } from "@napi-rs/blake-hash";
import { Client, CopyDestinationOptions, CopySourceOptions } from "minio";
import type { Sidecar } from "./sidecar.ts";
import type { Config } from "@app/platform";
import { HASH_RE } from "./hash.ts";
import {
  BlobNotFoundError,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type CommitResult,
  type SidecarUpdate,
  type StageOptions,
  type StagedBlob,
} from "./blob-store.ts";
import { SidecarFiles } from "./sidecar-files.ts";
import { stagedBlob } from "./staged-blob.ts";
import { guard, isNotFound, listObjects, readObject, unavailable } from "./s3-calls.ts";
import { S3PartialUploads } from "./s3-partial-uploads.ts";
import { DEFAULT_TEMP_MAX_AGE_MS, isAbandoned, temporaryName } from "./temporary-names.ts";

export interface S3BlobStoreOptions {
  endPoint: string;
  port?: number;
  useSSL: boolean;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
  /** Multipart part size: the most of an upload held in memory at once. */
  partSize?: number;
  /** The age from which the start-up sweep removes any temporary (TEMP_MAX_AGE_MS). */
  tempMaxAgeMs?: number;
}

const BLOBS = "blobs/";
/** Where the sidecars are (the prefix every version has written). */
const SIDECARS = "records/";
const TMP = "tmp/";

/**
 * The S3 / MinIO BlobStore (`minio` client). Uploads stream through blake3 into `tmp/<uuid>`
 * (multipart, one part in memory at a time); commit copies the temporary to `blobs/<hash>`
 * server-side (atomic: readers see no object or the whole object) unless that key exists, then
 * deletes the temporary. The sidecar is a JSON object beside the blob (`records/<hash>.json`):
 * S3 metadata can only change by rewriting the object, and a duplicate upload must not rewrite
 * anything under the hash name. The blob object carries its Content-Type (for presigned reads)
 * and its hash as metadata.
 *
 * Replicas share the bucket: the start-up sweep removes only abandoned temporaries (see
 * temporary-names.ts). A multipart upload cut off by a crash is no object yet; the bucket's
 * lifecycle rule (deploy/README.md) aborts it.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = "s3" as const;
  private readonly client: Client;
  private readonly sidecars = new SidecarFiles({
    read: async (hash) => {
      let text = "";
      try {
        for await (const chunk of await this.client.getObject(this.opts.bucket, `${SIDECARS}${hash}.json`)) text += String(chunk);
      } catch (err) {
        if (isNotFound(err)) return null;
        throw unavailable(err);
      }
      return text;
    },
    write: async (hash, text) => {
      const body = Buffer.from(text);
      await guard(() =>
        this.client.putObject(this.opts.bucket, `${SIDECARS}${hash}.json`, body, body.length, { "Content-Type": "application/json" }),
      );
    },
    blobExists: async (hash) => (await this.stat(hash)) !== null,
  });
  private readonly partSize: number;
  readonly partials: S3PartialUploads;

  constructor(private readonly opts: S3BlobStoreOptions) {
    this.client = new Client({
      endPoint: opts.endPoint,
      ...(opts.port !== undefined && { port: opts.port }),
      useSSL: opts.useSSL,
      accessKey: opts.accessKey,
      secretKey: opts.secretKey,
      region: opts.region,
      pathStyle: true,
      partSize: opts.partSize ?? 8 * 1024 * 1024,
    });
    this.partSize = opts.partSize ?? 8 * 1024 * 1024;
    this.partials = new S3PartialUploads(this.client, opts.bucket, this.partSize, (key, hash, size) => this.adopt(key, hash, size));
  }

  static fromConfig(config: Config): S3BlobStore {
    const url = new URL(config.S3_ENDPOINT!);
    return new S3BlobStore({
      endPoint: url.hostname,
      ...(url.port && { port: Number(url.port) }),
      useSSL: url.protocol === "https:",
      accessKey: config.S3_ACCESS_KEY!,
      secretKey: config.S3_SECRET_KEY!,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET!,
      tempMaxAgeMs: config.TEMP_MAX_AGE_MS,
    });
  }

  async init(): Promise<void> {
    await guard(async () => {
      if (await this.client.bucketExists(this.opts.bucket)) return;
      try {
        await this.client.makeBucket(this.opts.bucket, this.opts.region);
      } catch (err) {
        // Another process (the worker, a second replica) created it between our two calls.
        if (!BUCKET_EXISTS_CODES.has((err as { code?: string }).code ?? "")) throw err;
      }
    });
  }

  async stage(source: Readable, opts: StageOptions = {}): Promise<StagedBlob> {
    const key = TMP + temporaryName();
    const hasher = new Blake3Hasher();
    let size = 0;
    async function* hashed(): AsyncGenerator<Buffer> {
      for await (const chunk of source) {
        const b = chunk as Buffer;
        hasher.update(b);
        size += b.length;
        opts.onChunk?.(b);
        yield b;
      }
    }
    const chunks = hashed();
    try {
      // Up to one part is read first: a small upload (or an empty one, which the minio client
      // cannot stream) is a single PUT of known size; a larger one streams as a multipart upload.
      const head: Buffer[] = [];
      let headBytes = 0;
      let ended = false;
      while (headBytes < this.partSize) {
        const r = await chunks.next();
        if (r.done) {
          ended = true;
          break;
        }
        head.push(r.value);
        headBytes += r.value.length;
      }
      const body = ended
        ? Buffer.concat(head)
        : Readable.from(
            (async function* () {
              yield* head;
              yield* chunks;
            })(),
          );
      await guard(() => this.client.putObject(this.opts.bucket, key, body, ended ? headBytes : undefined));
    } catch (err) {
      source.destroy();
      await this.removeTemporary(key);
      throw err;
    }
    const hash = hasher.digest("hex");
    return this.adopt(key, hash, size);
  }

  /** An object of this bucket (a temporary, an assembled resumable upload) as staged content of `hash`. */
  private adopt(key: string, hash: string, size: number): StagedBlob {
    return stagedBlob(
      { hash, size, localPath: null },
      { publish: (update) => this.publish(key, hash, update), drop: () => this.removeTemporary(key) },
    );
  }

  private async publish(tmpKey: string, hash: string, update: SidecarUpdate): Promise<CommitResult> {
    let created = false;
    try {
      if (!(await this.stat(hash))) {
        const existing = await this.getSidecar(hash);
        const mime = update(existing).mime;
        await guard(() =>
          this.client.copyObject(
            new CopySourceOptions({ Bucket: this.opts.bucket, Object: tmpKey }),
            new CopyDestinationOptions({
              Bucket: this.opts.bucket,
              Object: BLOBS + hash,
              MetadataDirective: "REPLACE",
              Headers: { "Content-Type": mime },
              UserMetadata: { blake3: hash },
            }),
          ),
        );
        created = true;
      }
    } finally {
      await this.client.removeObject(this.opts.bucket, tmpKey).catch(() => undefined);
    }
    const sidecar = await this.updateSidecar(hash, update);
    return { created, sidecar };
  }

  async stat(hash: string): Promise<BlobStat | null> {
    if (!HASH_RE.test(hash)) return null;
    try {
      const s = await this.client.statObject(this.opts.bucket, BLOBS + hash);
      return { size: s.size, modifiedAt: s.lastModified.getTime() };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw unavailable(err);
    }
  }

  async read(hash: string, range?: ByteRange): Promise<Readable> {
    if (!HASH_RE.test(hash)) throw new BlobNotFoundError(hash);
    try {
      return await readObject(this.client, this.opts.bucket, BLOBS + hash, range);
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(hash);
      throw unavailable(err);
    }
  }

  async getSidecar(hash: string): Promise<Sidecar | null> {
    return this.sidecars.get(hash);
  }

  async updateSidecar(hash: string, update: SidecarUpdate): Promise<Sidecar> {
    return this.sidecars.update(hash, update);
  }

  /** Every committed hash. Not part of the port (nothing in a service lists a store): tests inspect a store with it. */
  async list(): Promise<string[]> {
    const names = await this.keys(BLOBS);
    return names
      .map((k) => k.slice(BLOBS.length))
      .filter((h) => HASH_RE.test(h))
      .sort();
  }

  async sweepTemporaries(): Promise<number> {
    const maxAge = this.opts.tempMaxAgeMs ?? DEFAULT_TEMP_MAX_AGE_MS;
    const now = Date.now();
    const abandoned = (await this.objects(TMP))
      .filter((o) => isAbandoned(o.name.slice(TMP.length), o.lastModified, now, maxAge))
      .map((o) => o.name);
    if (abandoned.length > 0) await guard(() => this.client.removeObjects(this.opts.bucket, abandoned));
    return abandoned.length;
  }

  private async removeTemporary(key: string): Promise<void> {
    await this.client.removeObject(this.opts.bucket, key).catch(() => undefined);
  }

  /** Names of the temporaries currently present, without the `tmp/` prefix (tests). */
  async temporaries(): Promise<string[]> {
    return (await this.keys(TMP)).map((k) => k.slice(TMP.length));
  }

  localPath(): string | null {
    return null;
  }

  async presignedUrl(hash: string, opts: { seconds: number; contentType?: string }): Promise<string | null> {
    return guard(() =>
      this.client.presignedGetObject(
        this.opts.bucket,
        BLOBS + hash,
        opts.seconds,
        opts.contentType ? { "response-content-type": opts.contentType } : {},
      ),
    );
  }

  async ping(): Promise<boolean> {
    try {
      return await this.client.bucketExists(this.opts.bucket);
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}

  private async keys(prefix: string): Promise<string[]> {
    return (await this.objects(prefix)).map((o) => o.name);
  }

  private async objects(prefix: string): Promise<{ name: string; lastModified: number }[]> {
    return listObjects(this.client, this.opts.bucket, prefix);
  }
}

const BUCKET_EXISTS_CODES = new Set(["BucketAlreadyExists", "BucketAlreadyOwnedByYou"]);
