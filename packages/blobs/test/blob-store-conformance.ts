import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { blake3 } from "@napi-rs/blake-hash";
import type { Sidecar } from "../src/sidecar.ts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { BlobNotFoundError, type BlobStore, type SidecarUpdate } from "../src/blob-store.ts";
import type { ChosenBlobStore } from "../src/create-blob-store.ts";
import { temporaryName } from "../src/temporary-names.ts";

/** What a store implementation hands the suite: the store plus a window on its temporaries. */
export interface StoreUnderTest {
  store: ChosenBlobStore;
  /** Names of temporaries currently present. */
  temporaries(): Promise<string[]>;
  /** Leave a temporary of this name behind (as a crash, or another process mid-upload, would). */
  plantTemporary(name: string): Promise<void>;
  /** Another store on the same root or bucket (a replica), with its own TEMP_MAX_AGE_MS. */
  sibling(opts: { tempMaxAgeMs: number }): BlobStore;
  cleanup(): Promise<void>;
}

const blake3Hex = (b: Buffer): string => blake3(b).toString("hex");

function recordFor(bytes: Buffer, tags: string[]): SidecarUpdate {
  return (existing) => {
    const at = new Date().toISOString();
    const base: Sidecar = existing ?? {
      hash: blake3Hex(bytes),
      ext: "png",
      size: bytes.length,
      mime: "image/png",
      width: 1,
      height: 1,
      first_uploaded_at: at,
      last_uploaded_at: at,
      tags: [],
    };
    return { ...base, last_uploaded_at: at, tags: [...new Set([...base.tags, ...tags])] };
  };
}

async function bytesOf(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function chunked(bytes: Buffer, size = 64 * 1024): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    })(),
  );
}

/** A source that sends some bytes, then fails as a dropped connection does. */
function failingAfter(bytes: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(bytes);
        setTimeout(() => this.destroy(new Error("client went away")), 5);
      }
    },
  });
}

/** The BlobStore contract: every implementation runs this unchanged. */
export function describeBlobStoreConformance(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`BlobStore conformance: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: ChosenBlobStore;

    beforeEach(async () => {
      sut = await makeStore();
      store = sut.store;
      await store.init();
    });
    afterEach(async () => {
      await sut.cleanup();
    });

    it("stages while hashing and commits under the blake3 of the bytes", async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      const staged = await store.stage(chunked(bytes));
      expect(staged.hash).toBe(blake3Hex(bytes));
      expect(staged.size).toBe(bytes.length);
      expect(await store.stat(staged.hash)).toBeNull(); // nothing visible before commit
      const { created, sidecar: record } = await staged.commit(recordFor(bytes, ["input"]));
      expect(created).toBe(true);
      expect(record.tags).toEqual(["input"]);
      expect((await store.stat(staged.hash))?.size).toBe(bytes.length);
      expect((await bytesOf(await store.read(staged.hash))).equals(bytes)).toBe(true);
      expect(await store.list()).toEqual([staged.hash]);
      expect(await sut.temporaries()).toEqual([]);
      expect(await store.getSidecar(staged.hash)).toEqual(record);
    });

    it("a duplicate commit writes nothing under the hash name and only merges the record", async () => {
      const bytes = randomBytes(200_000);
      const first = await store.stage(chunked(bytes));
      await first.commit(recordFor(bytes, ["input"]));
      const before = await store.stat(first.hash);
      await new Promise((r) => setTimeout(r, 1100)); // past any one-second timestamp granularity
      const again = await store.stage(chunked(bytes));
      const { created, sidecar: record } = await again.commit(recordFor(bytes, ["output"]));
      expect(created).toBe(false);
      expect(record.tags.sort()).toEqual(["input", "output"]);
      expect(await store.stat(first.hash)).toEqual(before);
      expect(await store.list()).toEqual([first.hash]);
      expect(await sut.temporaries()).toEqual([]);
    });

    it("racing commits of the same new content all succeed and leave one object", async () => {
      const bytes = randomBytes(1024 * 1024);
      const results = await Promise.all(
        Array.from({ length: 8 }, async (_, i) =>
          (await store.stage(chunked(bytes, 10_000 + i * 1000))).commit(recordFor(bytes, [`t${i}`])),
        ),
      );
      expect(results.filter((r) => r.created).length).toBeGreaterThanOrEqual(1);
      expect(await store.list()).toEqual([blake3Hex(bytes)]);
      expect((await bytesOf(await store.read(blake3Hex(bytes)))).equals(bytes)).toBe(true);
      const record = await store.getSidecar(blake3Hex(bytes));
      expect(record?.tags.sort()).toEqual(["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"]);
      expect(await sut.temporaries()).toEqual([]);
    });

    it("a source that fails mid-stream rejects and leaves no temporary", async () => {
      await expect(store.stage(failingAfter(randomBytes(100_000)))).rejects.toThrow(/client went away/);
      expect(await sut.temporaries()).toEqual([]);
      expect(await store.list()).toEqual([]);
    });

    it("discard drops the temporary and publishes nothing", async () => {
      const staged = await store.stage(chunked(randomBytes(50_000)));
      await staged.discard();
      expect(await sut.temporaries()).toEqual([]);
      expect(await store.stat(staged.hash)).toBeNull();
      expect(await store.list()).toEqual([]);
    });

    it("a staged blob settles once: a later discard keeps the commit, a later commit is refused", async () => {
      const bytes = randomBytes(2000);
      const committed = await store.stage(chunked(bytes));
      await committed.commit(recordFor(bytes, ["kept"]));
      await committed.discard();
      expect(await store.list()).toEqual([committed.hash]);
      expect((await bytesOf(await store.read(committed.hash))).equals(bytes)).toBe(true);
      await expect(committed.commit(recordFor(bytes, ["again"]))).rejects.toThrow(/already committed or discarded/);
      expect((await store.getSidecar(committed.hash))?.tags).toEqual(["kept"]);

      const other = randomBytes(2000);
      const discarded = await store.stage(chunked(other));
      await discarded.discard();
      await expect(discarded.commit(recordFor(other, []))).rejects.toThrow(/already committed or discarded/);
      expect(await store.stat(discarded.hash)).toBeNull();
      expect(await sut.temporaries()).toEqual([]);
    });

    it("reads inclusive byte ranges", async () => {
      const bytes = randomBytes(100_000);
      const staged = await store.stage(chunked(bytes));
      await staged.commit(recordFor(bytes, []));
      const h = staged.hash;
      expect((await bytesOf(await store.read(h, { start: 0, end: 0 }))).equals(bytes.subarray(0, 1))).toBe(true);
      expect((await bytesOf(await store.read(h, { start: 10, end: 19 }))).equals(bytes.subarray(10, 20))).toBe(true);
      expect((await bytesOf(await store.read(h, { start: 99_999, end: 99_999 }))).equals(bytes.subarray(99_999))).toBe(true);
      expect((await bytesOf(await store.read(h, { start: 50_000, end: 99_999 }))).equals(bytes.subarray(50_000))).toBe(true);
    });

    it("reads of one blob at once, whole and by ranges, some abandoned midway, each get their own bytes", async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 17); // several of the store's reads each
      const staged = await store.stage(chunked(bytes));
      await staged.commit(recordFor(bytes, []));
      const h = staged.hash;
      const abandoned = await store.read(h, { start: 5, end: 2_000_000 });
      abandoned.destroy(); // as a HEAD answer does
      const ranges: [number, number][] = [
        [0, bytes.length - 1],
        [1, 1_048_577],
        [2_000_000, 3_000_000],
        [bytes.length - 10, bytes.length - 1],
      ];
      const halfRead = (async () => {
        for await (const chunk of await store.read(h)) if ((chunk as Buffer).length > 0) break; // a client that goes away
      })();
      const reads = await Promise.all([...ranges.map(([start, end]) => store.read(h, { start, end })), store.read(h), store.read(h)]);
      const got = await Promise.all(reads.map(bytesOf));
      await halfRead;
      ranges.forEach(([start, end], i) => expect(got[i]!.equals(bytes.subarray(start, end + 1))).toBe(true));
      expect(got[4]!.equals(bytes) && got[5]!.equals(bytes)).toBe(true);
      expect((await bytesOf(await store.read(h, { start: 7, end: 7 }))).equals(bytes.subarray(7, 8))).toBe(true);
    });

    it("localPath: a file holding a committed blob's bytes, or null where the store has none (then read); never a path from something that is not a hash", async () => {
      const bytes = randomBytes(50_000);
      const staged = await store.stage(chunked(bytes));
      await staged.commit(recordFor(bytes, []));
      const path = store.localPath(staged.hash);
      if (path !== null) expect(readFileSync(path).equals(bytes)).toBe(true);
      for (const bad of ["../../etc/passwd", "../" + "a".repeat(61), "A".repeat(64)]) {
        let local: string | null = null;
        try {
          local = store.localPath(bad);
        } catch (err) {
          expect(err).toBeInstanceOf(BlobNotFoundError);
        }
        expect(local).toBeNull();
      }
    });

    it("merges tags from concurrent record updates without losing any", async () => {
      const bytes = randomBytes(1000);
      const staged = await store.stage(chunked(bytes));
      await staged.commit(recordFor(bytes, ["first"]));
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.updateSidecar(staged.hash, recordFor(bytes, [`tag${i}`]))));
      const record = await store.getSidecar(staged.hash);
      expect(record?.tags.length).toBe(21);
      expect(record?.tags).toContain("first");
      expect(record?.tags).toContain("tag19");
      expect(record?.size).toBe(1000);
    });

    it("keeps records with unusual tag text intact", async () => {
      const bytes = randomBytes(1000);
      const staged = await store.stage(chunked(bytes));
      const tags = ["original:" + "a".repeat(64), "mask", "type.with-dots_1"];
      await staged.commit(recordFor(bytes, tags));
      expect((await store.getSidecar(staged.hash))?.tags).toEqual(tags);
    });

    it("sweeps temporaries left by a crashed process on this host and leaves committed blobs alone", async () => {
      const bytes = randomBytes(5000);
      const staged = await store.stage(chunked(bytes));
      await staged.commit(recordFor(bytes, []));
      const gone = spawnSync(process.execPath, ["-e", ""]).pid; // a process that has exited
      await sut.plantTemporary(temporaryName(gone));
      await sut.plantTemporary(temporaryName(gone));
      expect((await sut.temporaries()).length).toBe(2);
      expect(await store.sweepTemporaries()).toBe(2);
      expect(await sut.temporaries()).toEqual([]);
      expect(await store.list()).toEqual([staged.hash]);
      expect((await bytesOf(await store.read(staged.hash))).equals(bytes)).toBe(true);
    });

    it("keeps a young temporary of a live process or another host (a replica mid-upload) until it is older than TEMP_MAX_AGE_MS", async () => {
      const live = temporaryName(process.ppid); // the test runner's parent: alive
      const elsewhere = temporaryName(process.pid, "another-host");
      await sut.plantTemporary(live);
      await sut.plantTemporary(elsewhere);
      expect(await store.sweepTemporaries()).toBe(0);
      expect(await sut.sibling({ tempMaxAgeMs: 60 * 60 * 1000 }).sweepTemporaries()).toBe(0);
      expect((await sut.temporaries()).sort()).toEqual([live, elsewhere].sort());
      await new Promise((r) => setTimeout(r, 20));
      // Older than the limit: whoever wrote them has long given up on them.
      expect(await sut.sibling({ tempMaxAgeMs: 10 }).sweepTemporaries()).toBe(2);
      expect(await sut.temporaries()).toEqual([]);
    });

    it("answers an unknown hash with null or BlobNotFoundError, never by touching a path", async () => {
      const unknown = "0".repeat(64);
      expect(await store.stat(unknown)).toBeNull();
      expect(await store.getSidecar(unknown)).toBeNull();
      await expect(store.read(unknown)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.updateSidecar(unknown, recordFor(Buffer.alloc(1), []))).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.read("../../etc/passwd")).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.stat("../" + "a".repeat(61))).toBeNull();
    });

    it.each([1, 4095, 4096, 4097, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1, 2 * 1024 * 1024 + 4096])(
      "keeps %i bytes exactly, whatever the chunking (block and alignment edges)",
      async (size) => {
        const bytes = randomBytes(size);
        for (const chunk of [1000, 4096, 65_536, 3 * 1024 * 1024]) {
          const staged = await store.stage(chunked(bytes, chunk));
          expect(staged.hash).toBe(blake3Hex(bytes));
          expect(staged.size).toBe(size);
          await staged.commit(recordFor(bytes, []));
          expect((await store.stat(staged.hash))?.size).toBe(size);
          expect((await bytesOf(await store.read(staged.hash))).equals(bytes)).toBe(true);
        }
        expect(await sut.temporaries()).toEqual([]);
      },
    );

    it("stages an empty stream", async () => {
      const staged = await store.stage(Readable.from([]));
      expect(staged.hash).toBe(blake3Hex(Buffer.alloc(0)));
      expect(staged.size).toBe(0);
      await staged.discard();
      expect(await sut.temporaries()).toEqual([]);
    });

    it("is reachable", async () => {
      expect(await store.ping()).toBe(true);
    });
  });
}
