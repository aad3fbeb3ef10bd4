import { createReadStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { temporaryName } from "./temporary-names.ts";
import { WritebackFileWriter } from "./writeback-file-writer.ts";
import { UPLOAD_ID_RE, type AssembledUpload, type PartialUpload, type PartialUploads, type StagedBlob } from "./blob-store.ts";

type Stored = Omit<PartialUpload, "offset">;

/**
 * Partial uploads on the filesystem store: `<dir>/<id>` holds the bytes received (its length is
 * the offset), `<dir>/<id>.json` the upload's record. `dir` is on the blob store's filesystem, so
 * an assembled upload is published under its hash by link(2), never copied. Replicas sharing
 * DATA_DIR share these too.
 */
export class FsPartialUploads implements PartialUploads {
  constructor(
    private readonly dir: string,
    private readonly adopt: (path: string, hash: string, size: number) => StagedBlob,
  ) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async create(upload: Stored): Promise<void> {
    await (await open(this.bytesPath(upload.id), "wx")).close();
    await this.writeRecord(upload);
  }

  async get(id: string): Promise<PartialUpload | null> {
    if (!UPLOAD_ID_RE.test(id)) return null;
    const stored = await this.readRecord(id);
    if (!stored) return null;
    if (stored.assetId) return { ...stored, offset: stored.size };
    const bytes = await stat(this.bytesPath(id)).catch(() => null);
    // No bytes and no asset: being published or removed right now.
    return bytes ? { ...stored, offset: bytes.size } : null;
  }

  async append(id: string, offset: number, source: Readable, onChunk: (chunk: Buffer) => void): Promise<number> {
    const handle = await open(this.bytesPath(id), "r+");
    const writer = new WritebackFileWriter(handle, { position: offset, onChunk, hash: false });
    try {
      await pipeline(source, writer);
      // The offset a PATCH answers is durable.
      await handle.datasync();
      return writer.position;
    } finally {
      await handle.close();
    }
  }

  async assemble(id: string): Promise<AssembledUpload> {
    const upload = await this.get(id);
    if (!upload || upload.offset !== upload.size) throw new Error(`upload ${id} is not complete`);
    const path = this.bytesPath(id);
    return {
      size: upload.size,
      localPath: path,
      read: async (range) => createReadStream(path, range ?? {}),
      stage: (hash) => this.adopt(path, hash, upload.size),
    };
  }

  async finish(id: string, assetId: string): Promise<void> {
    const stored = await this.readRecord(id);
    if (!stored) return;
    await this.writeRecord({ ...stored, assetId });
    await rm(this.bytesPath(id), { force: true });
  }

  async remove(id: string): Promise<boolean> {
    if (!UPLOAD_ID_RE.test(id)) return false;
    const existed = (await this.readRecord(id)) !== null;
    await rm(this.bytesPath(id), { force: true });
    await rm(this.recordPath(id), { force: true });
    return existed;
  }

  async list(): Promise<PartialUpload[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const ids = names.filter((n) => n.endsWith(".json") && UPLOAD_ID_RE.test(n.slice(0, -5))).map((n) => n.slice(0, -5));
    const uploads = await Promise.all(ids.map((id) => this.get(id)));
    return uploads.filter((u): u is PartialUpload => u !== null);
  }

  private bytesPath(id: string): string {
    if (!UPLOAD_ID_RE.test(id)) throw new Error("not an upload id");
    return join(this.dir, id);
  }

  private recordPath(id: string): string {
    return `${this.bytesPath(id)}.json`;
  }

  private async readRecord(id: string): Promise<Stored | null> {
    try {
      return JSON.parse(await readFile(this.recordPath(id), "utf8")) as Stored;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  // Written aside and renamed: a reader on any process sees the old record or the new one.
  private async writeRecord(upload: Stored): Promise<void> {
    const tmp = join(this.dir, `.${temporaryName()}`);
    await writeFile(tmp, JSON.stringify(upload), { flag: "wx" });
    await rename(tmp, this.recordPath(upload.id));
  }
}
