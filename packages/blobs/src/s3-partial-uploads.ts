import type { Readable } from "node:stream";
import type { Client } from "minio";
import { guard, isNotFound, listObjects, readObject } from "./s3-calls.ts";
import { UPLOAD_ID_RE, type AssembledUpload, type PartialUpload, type PartialUploads, type StagedBlob } from "./blob-store.ts";

const PREFIX = "uploads/";

interface Stored extends Omit<PartialUpload, "offset"> {
  /** The S3 multipart upload the bytes go to (`uploads/<id>.bin` once assembled). */
  uploadId: string;
  parts: { part: number; etag: string; size: number }[];
  /** Bytes past the last part, kept in `uploads/<id>.tail` until a part is full (S3 parts but the last are >= 5 MiB). */
  tail: number;
}

/**
 * Partial uploads on the S3 store, in its bucket: each is an S3 multipart upload whose parts,
 * with their ETags, are listed in `uploads/<id>.json` (written after every part, so any replica
 * sharing the bucket can take the next PATCH; no ListParts or ListMultipartUploads is needed).
 * A PATCH's bytes are cut into parts of `partSize` (one part in memory at a time); what is left
 * when a PATCH ends short of the last byte waits in `uploads/<id>.tail` and leads the next one.
 * A PATCH cut off keeps the parts already stored: the client resumes from the stored offset. The
 * last byte completes the multipart upload into `uploads/<id>.bin`, which is published under its
 * hash by a server-side copy.
 */
export class S3PartialUploads implements PartialUploads {
  constructor(
    private readonly client: Client,
    private readonly bucket: string,
    private readonly partSize: number,
    private readonly adopt: (key: string, hash: string, size: number) => StagedBlob,
  ) {}

  async create(upload: Omit<PartialUpload, "offset" | "assetId">): Promise<void> {
    const uploadId = await guard(() => this.client.initiateNewMultipartUpload(this.bucket, key(upload.id, "bin"), {}));
    await this.writeRecord({ ...upload, uploadId, parts: [], tail: 0 });
  }

  async get(id: string): Promise<PartialUpload | null> {
    const stored = UPLOAD_ID_RE.test(id) ? await this.readRecord(id) : null;
    return stored && publicView(stored);
  }

  async append(id: string, offset: number, source: Readable, onChunk: (chunk: Buffer) => void): Promise<number> {
    const stored = await this.readRecord(id);
    if (!stored || stored.assetId || offsetOf(stored) !== offset) throw new Error(`upload ${id} is not at offset ${offset}`);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let staleTail = false;
    if (stored.tail > 0) {
      const tail = await this.readAll(key(id, "tail"));
      pending.push(tail);
      pendingBytes = tail.length;
      staleTail = true;
    }
    const flush = async () => {
      const body = Buffer.concat(pending, pendingBytes);
      const part = stored.parts.length + 1;
      const { etag } = await guard(() =>
        this.client.uploadPart(
          { bucketName: this.bucket, objectName: key(id, "bin"), uploadID: stored.uploadId, partNumber: part, headers: {} },
          body,
        ),
      );
      stored.parts.push({ part, etag, size: body.length });
      stored.tail = 0;
      pending = [];
      pendingBytes = 0;
      await this.writeRecord(stored);
      if (staleTail) {
        // Its bytes are in the part now; the record no longer names it.
        staleTail = false;
        await this.client.removeObject(this.bucket, key(id, "tail")).catch(() => undefined);
      }
    };
    for await (const chunk of source) {
      const b = chunk as Buffer;
      onChunk(b);
      pending.push(b);
      pendingBytes += b.length;
      if (pendingBytes >= this.partSize) await flush();
    }
    if (offsetOf({ ...stored, tail: 0 }) + pendingBytes === stored.size) {
      if (pendingBytes > 0) await flush();
    } else if (pendingBytes > 0) {
      const body = Buffer.concat(pending, pendingBytes);
      await guard(() => this.client.putObject(this.bucket, key(id, "tail"), body, body.length));
      stored.tail = body.length;
      await this.writeRecord(stored);
    }
    return offsetOf(stored);
  }

  async assemble(id: string): Promise<AssembledUpload> {
    const stored = await this.readRecord(id);
    if (!stored || offsetOf(stored) !== stored.size || stored.parts.length === 0) throw new Error(`upload ${id} is not complete`);
    const bin = key(id, "bin");
    await guard(() => this.client.completeMultipartUpload(this.bucket, bin, stored.uploadId, stored.parts));
    return {
      size: stored.size,
      localPath: null,
      read: (range) => guard(() => readObject(this.client, this.bucket, bin, range)),
      stage: (hash) => this.adopt(bin, hash, stored.size),
    };
  }

  async finish(id: string, assetId: string): Promise<void> {
    const stored = await this.readRecord(id);
    if (!stored) return;
    await this.writeRecord({ ...stored, assetId, parts: [], tail: 0 });
    await this.client.removeObjects(this.bucket, [key(id, "tail"), key(id, "bin")]).catch(() => undefined);
  }

  async remove(id: string): Promise<boolean> {
    if (!UPLOAD_ID_RE.test(id)) return false;
    const stored = await this.readRecord(id);
    if (!stored) return false;
    if (!stored.assetId) await this.client.abortMultipartUpload(this.bucket, key(id, "bin"), stored.uploadId).catch(() => undefined);
    await guard(() => this.client.removeObjects(this.bucket, [key(id, "tail"), key(id, "bin"), key(id, "json")]));
    return true;
  }

  async list(): Promise<PartialUpload[]> {
    const ids = (await listObjects(this.client, this.bucket, PREFIX))
      .map((o) => o.name.slice(PREFIX.length))
      .filter((n) => n.endsWith(".json") && UPLOAD_ID_RE.test(n.slice(0, -5)))
      .map((n) => n.slice(0, -5));
    const uploads = await Promise.all(ids.map((id) => this.get(id)));
    return uploads.filter((u): u is PartialUpload => u !== null);
  }

  private async readRecord(id: string): Promise<Stored | null> {
    try {
      return JSON.parse((await this.readAll(key(id, "json"))).toString("utf8")) as Stored;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  private async writeRecord(stored: Stored): Promise<void> {
    const body = Buffer.from(JSON.stringify(stored));
    await guard(() =>
      this.client.putObject(this.bucket, key(stored.id, "json"), body, body.length, { "Content-Type": "application/json" }),
    );
  }

  private async readAll(objectKey: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.client.getObject(this.bucket, objectKey)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}

function key(id: string, kind: "json" | "bin" | "tail"): string {
  if (!UPLOAD_ID_RE.test(id)) throw new Error("not an upload id");
  return `${PREFIX}${id}.${kind}`;
}

function offsetOf(stored: Stored): number {
  return stored.assetId ? stored.size : stored.parts.reduce((n, p) => n + p.size, 0) + stored.tail;
}

function publicView(stored: Stored): PartialUpload {
  const { uploadId: _u, parts: _p, tail: _t, ...upload } = stored;
  return { ...upload, offset: offsetOf(stored) };
}
