import { createReadStream, open as openFd, read as readFd } from "node:fs";
import { link, mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Sidecar } from "./sidecar.ts";
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
import { WritebackFileWriter } from "./writeback-file-writer.ts";
import { FsPartialUploads } from "./fs-partial-uploads.ts";
import { OpenBlobFiles } from "./open-blob-files.ts";
import { DEFAULT_TEMP_MAX_AGE_MS, isAbandoned, temporaryName } from "./temporary-names.ts";

/**
 * The filesystem BlobStore: `<root>/ab/cd/<hash>` with its sidecar beside it in `<hash>.json`,
 * temporaries in `<root>/tmp/`. A blob is published with link(2), which fails if the name
 * exists, so racing commits of the same content leave exactly one object and never expose a
 * partial file. Paths are only ever built from a validated 64-hex hash.
 *
 * Several processes may share one root (replicas on a shared DATA_DIR): the start-up sweep only
 * removes temporaries that are abandoned (see temporary-names.ts), never another's upload in progress.
 */
const READ_CHUNK = 1024 * 1024;

export class FsBlobStore implements BlobStore {
  readonly kind = "fs" as const;
  private readonly tmpDir: string;
  readonly partials: FsPartialUploads;
  /** Descriptors of recently read blobs, so that a file read in many ranges is opened once (open-blob-files.ts). */
  private readonly openFiles = new OpenBlobFiles({ max: 64, idleMs: 10_000 });
  private readonly sidecars = new SidecarFiles({
    read: async (hash) => {
      try {
        return await readFile(this.sidecarPath(hash), "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw err;
      }
    },
    // Written to a temporary and renamed, so a reader sees the old sidecar or the new one.
    write: async (hash, text) => {
      const tmp = this.tempPath();
      await writeFile(tmp, text, { flag: "wx" });
      await rename(tmp, this.sidecarPath(hash));
    },
    blobExists: async (hash) => (await this.stat(hash)) !== null,
  });

  /** `tempMaxAgeMs`: the age from which the sweep removes any temporary (TEMP_MAX_AGE_MS). */
  constructor(
    private readonly root: string,
    private readonly opts: { tempMaxAgeMs?: number } = {},
  ) {
    this.tmpDir = join(root, "tmp");
    // Beside the blobs, on the same filesystem: an assembled upload is published with link(2).
    this.partials = new FsPartialUploads(join(root, "uploads"), (path, hash, size) => this.adopt(path, hash, size));
  }

  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true });
    await this.partials.init();
  }

  async stage(source: Readable, opts: StageOptions = {}): Promise<StagedBlob> {
    const tmp = this.tempPath();
    // The source may fail while the file opens; pipeline below reports it, this only keeps it handled.
    source.on("error", () => undefined);
    // Opened before any byte flows, so a failure can always find and remove the file.
    const handle = await open(tmp, "wx");
    const writer = new WritebackFileWriter(handle, { ...(opts.onChunk && { onChunk: opts.onChunk }) });
    try {
      await pipeline(source, writer);
    } catch (err) {
      await handle.close().catch(() => undefined);
      await rm(tmp, { force: true });
      throw err;
    }
    await handle.close();
    const hash = writer.hasher!.digest("hex");
    return this.adopt(tmp, hash, writer.position);
  }

  /** A file of this store's filesystem (a temporary, an assembled resumable upload) as staged content of `hash`. */
  private adopt(path: string, hash: string, size: number): StagedBlob {
    return stagedBlob(
      { hash, size, localPath: path },
      { publish: (update) => this.publish(path, hash, update), drop: () => rm(path, { force: true }) },
    );
  }

  private async publish(tmp: string, hash: string, update: SidecarUpdate): Promise<CommitResult> {
    const final = this.blobPath(hash);
    const dir = join(final, "..");
    let created = false;
    try {
      // A duplicate is dropped before paying for an fsync it does not need.
      if (!(await this.stat(hash))) {
        await mkdir(dir, { recursive: true });
        // Durable before it gets its name, so a hash name never holds a torn write after a crash.
        await fsyncPath(tmp);
        try {
          await link(tmp, final);
          created = true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        }
      }
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
    if (created) await fsyncPath(dir);
    const sidecar = await this.updateSidecar(hash, update);
    return { created, sidecar };
  }

  async stat(hash: string): Promise<BlobStat | null> {
    if (!HASH_RE.test(hash)) return null;
    const held = this.openFiles.statIfOpen(this.blobPath(hash));
    if (held) return held;
    try {
      const s = await stat(this.blobPath(hash));
      return { size: s.size, modifiedAt: s.mtimeMs };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async read(hash: string, range?: ByteRange): Promise<Readable> {
    const path = this.blobPath(hash);
    const file = await this.openFiles.acquire(path);
    if (!file) throw new BlobNotFoundError(hash);
    return createReadStream(path, {
      fd: file.fd,
      // Always a position: the descriptor is shared, so every read is a pread(2) at this stream's own offset.
      start: range?.start ?? 0,
      end: range?.end ?? Infinity,
      // 1 MiB reads (the default is 64 KiB): a model-sized download makes 16 times fewer reads and socket writes.
      highWaterMark: READ_CHUNK,
      // The stream "closes" the shared descriptor by releasing it, after its last read has returned (also when destroyed).
      fs: {
        open: openFd,
        read: readFd,
        close: (_fd: number, done: (err: NodeJS.ErrnoException | null) => void) => (file.release(), done(null)),
      },
    });
  }

  async getSidecar(hash: string): Promise<Sidecar | null> {
    return this.sidecars.get(hash);
  }

  async updateSidecar(hash: string, update: SidecarUpdate): Promise<Sidecar> {
    return this.sidecars.update(hash, update);
  }

  /** Every committed hash. Not part of the port (nothing in a service lists a store): tests inspect a store with it. */
  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const a of await readdirOrEmpty(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue;
      for (const b of await readdirOrEmpty(join(this.root, a))) {
        if (!/^[0-9a-f]{2}$/.test(b)) continue;
        for (const name of await readdirOrEmpty(join(this.root, a, b))) {
          if (HASH_RE.test(name)) out.push(name);
        }
      }
    }
    return out.sort();
  }

  async sweepTemporaries(): Promise<number> {
    const maxAge = this.opts.tempMaxAgeMs ?? DEFAULT_TEMP_MAX_AGE_MS;
    const now = Date.now();
    const removed = await Promise.all(
      (await readdirOrEmpty(this.tmpDir)).map(async (name) => {
        const path = join(this.tmpDir, name);
        const modified = await stat(path).then(
          (s) => s.mtimeMs,
          () => null,
        );
        if (modified === null || !isAbandoned(name, modified, now, maxAge)) return false;
        await rm(path, { force: true, recursive: true });
        return true;
      }),
    );
    return removed.filter(Boolean).length;
  }

  localPath(hash: string): string | null {
    return this.blobPath(hash);
  }

  async presignedUrl(): Promise<string | null> {
    return null;
  }

  async ping(): Promise<boolean> {
    try {
      await stat(this.tmpDir);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.openFiles.closeAll();
  }

  /** Temporaries currently present (tests check that aborted uploads leave none). */
  async temporaries(): Promise<string[]> {
    return readdirOrEmpty(this.tmpDir);
  }

  private blobPath(hash: string): string {
    if (!HASH_RE.test(hash)) throw new BlobNotFoundError(hash);
    return join(this.root, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  private sidecarPath(hash: string): string {
    return `${this.blobPath(hash)}.json`;
  }

  private tempPath(): string {
    return join(this.tmpDir, temporaryName());
  }
}

async function fsyncPath(path: string): Promise<void> {
  const h = await open(path, "r");
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}
