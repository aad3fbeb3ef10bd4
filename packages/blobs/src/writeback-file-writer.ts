import type { FileHandle } from "node:fs/promises";
import { Writable } from "node:stream";
import { Blake3Hasher } from "@napi-rs/blake-hash";

/** What one upload may queue while a write is in flight, and so about what it hashes and hands on in one turn of the event loop. */
const QUEUE_BYTES = 256 * 1024;
/** Bytes gathered before one `writev`: large writes, few hand-offs to the thread pool. */
const WRITE_BYTES = 1024 * 1024;

/**
 * Hashes (blake3) and writes to an open file (through the page cache) in one step, and starts a
 * datasync every few MiB while the upload is still arriving, so the disk works in parallel with
 * the network and the fsync before commit has little left. `position`: where the first byte goes
 * (a resumed upload appends); `hash: false` when the caller hashes (through `onChunk`).
 */
export class WritebackFileWriter extends Writable {
  readonly hasher: Blake3Hasher | null;
  position: number;
  private readonly onChunk: ((chunk: Buffer) => void) | undefined;
  private unsynced = 0;
  private syncing: Promise<void> | null = null;
  /** Hashed and taken, not yet written (at most WRITE_BYTES). */
  private gathered: Buffer[] = [];
  private gatheredBytes = 0;

  constructor(
    private readonly handle: FileHandle,
    opts: { onChunk?: (chunk: Buffer) => void; position?: number; hash?: boolean } = {},
    private readonly syncEvery = 8 * 1024 * 1024,
  ) {
    // The queue and the write size apart: a 256 KiB queue keeps one upload's turn of the event
    // loop short (a 1 MiB queue made turns of several ms with four uploads), while 1 MiB writes
    // keep the thread pool hand-offs few (docs/decisions/0014).
    super({ highWaterMark: QUEUE_BYTES });
    this.hasher = opts.hash === false ? null : new Blake3Hasher();
    this.position = opts.position ?? 0;
    this.onChunk = opts.onChunk;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.take([chunk], done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (err?: Error | null) => void): void {
    this.take(
      chunks.map((c) => c.chunk),
      done,
    );
  }

  override _final(done: (err?: Error | null) => void): void {
    this.writeGathered()
      .then(() => this.syncing)
      .then(() => done(), done);
  }

  /** Hashes the chunks and gathers them; writes once a write's worth is gathered. */
  private take(buffers: Buffer[], done: (err?: Error | null) => void): void {
    for (const b of buffers) {
      this.hasher?.update(b);
      this.onChunk?.(b);
      this.gathered.push(b);
      this.gatheredBytes += b.length;
    }
    if (this.gatheredBytes < WRITE_BYTES) return done();
    this.writeGathered().then(() => done(), done);
  }

  private async writeGathered(): Promise<void> {
    let pending = this.gathered;
    this.gathered = [];
    this.gatheredBytes = 0;
    while (pending.length > 0) {
      const { bytesWritten } = await this.handle.writev(pending, this.position);
      this.position += bytesWritten;
      this.unsynced += bytesWritten;
      pending = dropBytes(pending, bytesWritten);
    }
    if (this.unsynced >= this.syncEvery && !this.syncing) {
      this.unsynced = 0;
      this.syncing = this.handle.datasync().finally(() => {
        this.syncing = null;
      });
      this.syncing.catch(() => undefined);
    }
  }
}

function dropBytes(buffers: Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  for (const b of buffers) {
    if (n >= b.length) {
      n -= b.length;
      continue;
    }
    out.push(n > 0 ? b.subarray(n) : b);
    n = 0;
  }
  return out;
}
