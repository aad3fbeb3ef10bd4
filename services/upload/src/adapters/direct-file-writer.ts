import { constants, writeSync } from "node:fs";
import { type FileHandle, open, rm } from "node:fs/promises";
import { Writable } from "node:stream";
import { Blake3Hasher } from "@napi-rs/blake-hash";

/**
 * Writing uploads with O_DIRECT (UPLOAD_DIRECT_IO=on; buffered is the default), as MinIO does: a
 * write-once blob goes from our buffer to the disk without a copy into the page cache. Direct I/O
 * wants the buffer's address, the file offset and the length aligned to the device's block; the
 * last block is written padded and the file truncated back to size.
 *
 * Node tells no buffer's address, so an aligned block is found, not computed: a buffer 4 KiB
 * larger than the block is allocated, and a direct write of 4 KiB from candidate offsets into it
 * (to an unlinked scratch file) fails with EINVAL until the address is aligned. This costs one or
 * two small writes per block (the allocator's offset is remembered), blocks are pooled, and it
 * reserves nothing beyond the memory itself (a WebAssembly.Memory, page-aligned, reserves about
 * 10 GiB of address space each, which a `ulimit -v` refuses by the second).
 */
const ALIGN = 4096;
const BLOCK = 1024 * 1024;
/** The smallest alignment any allocator gives an ArrayBuffer's memory. */
const MIN_ALIGN = 8;

/** O_DIRECT where the platform has it; undefined elsewhere. */
const O_DIRECT: number | undefined = (constants as Record<string, number>).O_DIRECT;

/** The unlinked scratch file aligned addresses are found with (the first one opened). */
let prober: FileHandle | null = null;
let lastOffset = 0;

/** Spare aligned blocks, kept between uploads so their pages are already mapped. */
const spareBlocks: Buffer[] = [];
const MAX_SPARE_BLOCKS = 16;

function alignedBlock(probe: FileHandle | null = prober): Buffer {
  if (!probe) throw new Error("direct I/O was not set up (directIoWorks)");
  const raw = Buffer.allocUnsafeSlow(BLOCK + ALIGN);
  const offsets = [lastOffset, ...Array.from({ length: ALIGN / MIN_ALIGN }, (_, i) => i * MIN_ALIGN)];
  for (const offset of offsets) {
    try {
      writeSync(probe.fd, raw, offset, ALIGN, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EINVAL") continue;
      throw err;
    }
    lastOffset = offset;
    return raw.subarray(offset, offset + BLOCK);
  }
  throw new Error("no 4 KiB-aligned address in a fresh buffer");
}

function takeBlock(): Buffer {
  return spareBlocks.pop() ?? alignedBlock();
}

function giveBlock(block: Buffer): void {
  if (spareBlocks.length < MAX_SPARE_BLOCKS) spareBlocks.push(block);
}

/**
 * Whether direct I/O works in `dir` (the platform has it, the filesystem takes it, and an
 * aligned block can be found): one aligned block written to a scratch file there, unlinked at once.
 */
export async function directIoWorks(dir: string, scratchName: string): Promise<boolean> {
  if (O_DIRECT === undefined) return false;
  const path = `${dir}/${scratchName}`;
  let handle: FileHandle | null = null;
  try {
    handle = await openDirect(path);
    await rm(path, { force: true });
    const block = spareBlocks.pop() ?? alignedBlock(prober ?? handle);
    try {
      const { bytesWritten } = await handle.write(block, 0, ALIGN, 0);
      if (bytesWritten !== ALIGN) return false;
    } finally {
      giveBlock(block);
    }
    prober ??= handle;
    return true;
  } catch {
    return false;
  } finally {
    if (handle && handle !== prober) await handle.close();
    await rm(path, { force: true });
  }
}

export async function openDirect(path: string): Promise<FileHandle> {
  return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_DIRECT!);
}

/** Block writes outstanding per upload before it waits: the thread pool's size, so the disk keeps busy. */
const MAX_IN_FLIGHT = 4;

/**
 * Hashes (blake3) every chunk as it arrives and copies it into an aligned block; a full block
 * is written while the next fills. A chunk is taken synchronously unless MAX_IN_FLIGHT writes
 * are outstanding, so the socket's buffers are let go as soon as they are copied.
 */
export class DirectFileWriter extends Writable {
  readonly hasher = new Blake3Hasher();
  /** Bytes received (the file's final size). */
  position = 0;
  private block = takeBlock();
  private filled = 0;
  private flushedBytes = 0;
  private readonly writes = new Set<Promise<void>>();
  private failure: Error | null = null;
  private released = false;

  constructor(
    private readonly handle: FileHandle,
    private readonly onChunk?: (chunk: Buffer) => void,
  ) {
    super({ highWaterMark: BLOCK });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.hasher.update(chunk);
    this.onChunk?.(chunk);
    this.position += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      const n = chunk.copy(this.block, this.filled, offset);
      this.filled += n;
      offset += n;
      if (this.filled === BLOCK) this.startWrite(BLOCK);
    }
    if (this.failure || this.writes.size < MAX_IN_FLIGHT) return done(this.failure);
    void Promise.race(this.writes).then(() => done(this.failure));
  }

  override _final(done: (err?: Error | null) => void): void {
    this.finish().then(() => done(), done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // Blocks still being written go back to the pool as their writes settle.
    this.release();
    done(err);
  }

  /** Write the current block (`length`: the bytes in it, rounded up to the alignment) and go on in a fresh one. */
  private startWrite(length: number): void {
    const block = this.block;
    const at = this.flushedBytes;
    this.flushedBytes += this.filled;
    this.filled = 0;
    this.block = takeBlock();
    const write: Promise<void> = writeFully(this.handle, block, length, at)
      .catch((err: Error) => {
        this.failure ??= err;
      })
      .finally(() => {
        giveBlock(block);
        this.writes.delete(write);
      });
    this.writes.add(write);
  }

  private async finish(): Promise<void> {
    if (this.filled > 0) this.startWrite(Math.ceil(this.filled / ALIGN) * ALIGN);
    await Promise.all(this.writes);
    if (this.failure) throw this.failure;
    // The last block went out padded to the alignment: cut the file back to what was received.
    if (this.position % ALIGN !== 0) await this.handle.truncate(this.position);
    this.release();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    giveBlock(this.block);
  }
}

async function writeFully(handle: FileHandle, block: Buffer, length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await handle.write(block, done, length - done, position + done);
    if (bytesWritten <= 0) throw new Error("direct write made no progress");
    done += bytesWritten;
  }
}
