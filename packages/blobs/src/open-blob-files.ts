import { close, fstat, fstatSync, open, type Stats } from "node:fs";
import { promisify } from "node:util";

const openFile = promisify(open);
const fstatFile = promisify(fstat);
const closeFile = promisify(close);

/** A committed blob's file held open: its descriptor and its size (the bytes under a hash never change). */
export interface OpenBlobFile {
  fd: number;
  size: number;
  modifiedAt: number;
  /** Done reading: the descriptor may be closed once nobody else reads it. Call exactly once. */
  release(): void;
}

interface Entry {
  opened: Promise<{ fd: number; stats: Stats } | null>;
  fd: number | null;
  users: number;
  lastUsed: number;
  /** Out of the cache: closed when its last reader releases it. */
  dropped: boolean;
}

/**
 * The descriptors of recently read blobs, kept open between reads: a video player or a resumed
 * download asks for one file in many ranges, and each range then costs no open(2), stat(2) and
 * close(2) (three trips to libuv's thread pool). Safe because a blob's bytes never change under
 * its hash (published once with link(2), never rewritten). A file removed from disk behind the
 * store's back is noticed: a kept descriptor whose file has no name left (`nlink` 0) is dropped
 * and the path opened again, which then finds nothing, as a store without this cache would.
 * At most `max` descriptors stay open (the least recently used go first); one unused for
 * `idleMs` is closed.
 */
export class OpenBlobFiles {
  private readonly entries = new Map<string, Entry>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly opts: { max: number; idleMs: number }) {}

  /** The open file at `path`, or null when there is none (ENOENT). */
  async acquire(path: string): Promise<OpenBlobFile | null> {
    let entry = this.entries.get(path);
    if (entry && entry.fd !== null && !stillNamed(entry.fd)) {
      void this.drop(path, entry);
      entry = undefined;
    }
    if (!entry) entry = this.add(path);
    entry.users++;
    entry.lastUsed = Date.now();
    // Most recently used last: Map keeps insertion order, so the first entries are the coldest.
    this.entries.delete(path);
    if (!entry.dropped) this.entries.set(path, entry);
    let file;
    try {
      file = await entry.opened;
    } catch (err) {
      this.release(path, entry);
      throw err;
    }
    if (!file) {
      this.release(path, entry);
      return null;
    }
    let released = false;
    return {
      fd: file.fd,
      size: file.stats.size,
      modifiedAt: file.stats.mtimeMs,
      release: () => {
        if (released) return;
        released = true;
        this.release(path, entry);
      },
    };
  }

  /** The size and mtime of a file already held open (one fstat, no trip to the thread pool), or undefined when none is. */
  statIfOpen(path: string): { size: number; modifiedAt: number } | undefined {
    const entry = this.entries.get(path);
    if (!entry || entry.fd === null) return undefined;
    // A descriptor is always open here; fstat of it reads the inode the kernel holds, never the disk.
    const stats = fstatSync(entry.fd);
    if (stats.nlink === 0) {
      void this.drop(path, entry);
      return undefined;
    }
    return { size: stats.size, modifiedAt: stats.mtimeMs };
  }

  /** Close every descriptor nobody reads; those being read close when their reader is done. */
  async closeAll(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    await Promise.all([...this.entries].map(([path, entry]) => this.drop(path, entry)));
  }

  private add(path: string): Entry {
    const entry: Entry = { opened: Promise.resolve(null), fd: null, users: 0, lastUsed: Date.now(), dropped: false };
    entry.opened = openAndStat(path).then(
      (file) => {
        if (!file) {
          // Nothing to keep: the next read looks again.
          if (this.entries.get(path) === entry) this.entries.delete(path);
          entry.dropped = true;
          return null;
        }
        entry.fd = file.fd;
        // Dropped while it opened (trimmed, closeAll): closed once its readers release it.
        if (entry.dropped) void this.closeIfUnused(entry);
        return file;
      },
      (err: unknown) => {
        if (this.entries.get(path) === entry) this.entries.delete(path);
        entry.dropped = true;
        throw err;
      },
    );
    this.entries.set(path, entry);
    this.trim();
    this.sweepWhenIdle();
    return entry;
  }

  private release(path: string, entry: Entry): void {
    entry.users--;
    entry.lastUsed = Date.now();
    if (entry.dropped) void this.closeIfUnused(entry);
    else this.trim();
  }

  private drop(path: string, entry: Entry): Promise<void> {
    if (this.entries.get(path) === entry) this.entries.delete(path);
    entry.dropped = true;
    return this.closeIfUnused(entry);
  }

  private async closeIfUnused(entry: Entry): Promise<void> {
    if (entry.users > 0 || entry.fd === null) return;
    const fd = entry.fd;
    entry.fd = null;
    await closeFile(fd).catch(() => undefined);
  }

  /** Over `max`: drop the least recently used (a dropped one still read closes when its reader is done). */
  private trim(): void {
    for (const [path, entry] of this.entries) {
      if (this.entries.size <= this.opts.max) break;
      void this.drop(path, entry);
    }
  }

  private sweepWhenIdle(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(
      () => {
        const cutoff = Date.now() - this.opts.idleMs;
        for (const [path, entry] of [...this.entries]) {
          if (entry.users === 0 && entry.lastUsed < cutoff) void this.drop(path, entry);
        }
        if (this.entries.size === 0 && this.sweeper) {
          clearInterval(this.sweeper);
          this.sweeper = null;
        }
      },
      Math.max(1000, this.opts.idleMs / 2),
    );
    // Kept descriptors never keep a process alive.
    this.sweeper.unref();
  }
}

function stillNamed(fd: number): boolean {
  return fstatSync(fd).nlink > 0;
}

async function openAndStat(path: string): Promise<{ fd: number; stats: Stats } | null> {
  let fd;
  try {
    fd = await openFile(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    return { fd, stats: await fstatFile(fd) };
  } catch (err) {
    await closeFile(fd).catch(() => undefined);
    throw err;
  }
}
