import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { Transform } from "node:stream";
import { archiveSidecar, type ArchiveBlobs } from "./archive-blobs.ts";
import type { ArchiveEntry, ArchiveIndex } from "./archive-index.ts";
import { fetchUpstreamArchive, UpstreamArchiveError } from "./upstream-archive.ts";

/** A pack version whose archive upstream's storage holds at `upstreamUrl` (the catalog's `downloadUrl`). */
export interface ArchiveTarget {
  id: string;
  version: string;
  upstreamUrl: string;
}

/**
 * Where the bytes of a pull-through go besides the store: `start` once upstream has answered
 * (so an unreachable upstream can still be answered 503), then each chunk; a returned promise
 * holds the next chunk back until it settles (the client's backpressure). The last chunk goes
 * out with `end`, only once the archive is stored: a client that has every byte can ask again
 * and be served from the store, upstream or not.
 */
export interface ArchiveSink {
  start(size: number | undefined): void;
  write(chunk: Buffer): Promise<void> | void;
  end(last: Buffer | undefined): void;
}

/**
 * The node archives held in the blob store: which are stored, their bytes, and the one way in,
 * `ingest`, which fetches from upstream, hashes (blake3 by the store, SHA-256 here) while storing
 * and, when a client is waiting, streams the same chunks to it.
 */
export class ArchiveStore {
  private readonly inFlight = new Map<string, Promise<ArchiveEntry>>();

  constructor(
    private readonly blobs: ArchiveBlobs,
    readonly index: ArchiveIndex,
    private readonly timeoutMs: number,
  ) {}

  /** The stored archive of a version, if its blob is still there. */
  async stored(id: string, version: string): Promise<ArchiveEntry | undefined> {
    const entry = await this.index.get(id, version);
    if (!entry) return undefined;
    return (await this.blobs.stat(entry.blake3)) ? entry : undefined;
  }

  read(entry: ArchiveEntry, range?: { start: number; end: number }): Promise<Readable> {
    return this.blobs.read(entry.blake3, range);
  }

  /** Stored already, or fetched and stored now; concurrent calls for one version share one fetch. */
  ensure(target: ArchiveTarget, signal?: AbortSignal): Promise<ArchiveEntry> {
    const k = `${target.id}\u0000${target.version}`;
    let p = this.inFlight.get(k);
    if (!p) {
      p = (async () => (await this.stored(target.id, target.version)) ?? (await this.ingest(target, undefined, signal)))();
      this.inFlight.set(k, p);
      void p.finally(() => this.inFlight.delete(k)).catch(() => undefined);
    }
    return p;
  }

  /**
   * Fetch the archive from upstream and store it, passing every chunk to `sink` as it goes.
   * Rejects with UpstreamArchiveError before `sink.start` when upstream cannot give it; a failure
   * after that (upstream broke off, a short body) stores nothing.
   */
  async ingest(target: ArchiveTarget, sink?: ArchiveSink, signal?: AbortSignal): Promise<ArchiveEntry> {
    const upstream = await fetchUpstreamArchive(target.upstreamUrl, this.timeoutMs, signal);
    sink?.start(upstream.size);
    const sha256 = createHash("sha256");
    let last: Buffer | undefined;
    const tee = new Transform({
      transform(chunk: Buffer, _enc, done) {
        sha256.update(chunk);
        const previous = last;
        last = chunk;
        const held = previous && sink?.write(previous);
        if (held) held.then(() => done(null, chunk), done);
        else done(null, chunk);
      },
    });
    upstream.body.on("error", (err) => tee.destroy(err));
    upstream.body.pipe(tee);
    const staged = await this.blobs.stage(tee);
    if (upstream.size !== undefined && staged.size !== upstream.size) {
      await staged.discard();
      throw new UpstreamArchiveError(
        `the archive of ${target.id} ${target.version} arrived with ${staged.size} of its ${upstream.size} bytes`,
      );
    }
    await staged.commit(archiveSidecar(staged.hash, staged.size));
    const entry: ArchiveEntry = {
      id: target.id,
      version: target.version,
      blake3: staged.hash,
      sha256: sha256.digest("base64"),
      size: staged.size,
      storedAt: new Date().toISOString(),
    };
    await this.index.add(entry);
    sink?.end(last);
    return entry;
  }
}
