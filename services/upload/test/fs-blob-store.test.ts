import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsBlobStore } from "../src/adapters/fs-blob-store.ts";
import { describeBlobStoreConformance } from "./blob-store-conformance.ts";

// Direct I/O where this filesystem takes it (the default), and the buffered fallback.
for (const directIo of [true, false]) {
  describeBlobStoreConformance(`filesystem (${directIo ? "direct I/O where available" : "buffered"})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), "fs-blob-"));
    const root = join(dir, "blobs");
    const store = new FsBlobStore(root, { directIo });
    return {
      store,
      temporaries: async () => readdir(join(root, "tmp")).catch(() => []),
      plantTemporary: async (name) => writeFile(join(root, "tmp", name), "partial"),
      sibling: ({ tempMaxAgeMs }) => new FsBlobStore(root, { directIo, tempMaxAgeMs }),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  });
}

describe("FsBlobStore write mode", () => {
  it("writes buffered by default, with O_DIRECT on Linux's usual filesystems when asked; neither leaves a probe file behind", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fs-blob-mode-"));
    try {
      const direct = new FsBlobStore(join(dir, "a"), { directIo: true });
      const buffered = new FsBlobStore(join(dir, "b"));
      await Promise.all([direct.init(), buffered.init()]);
      expect(direct.writeMode).toBe(process.platform === "linux" ? "direct" : "buffered");
      expect(buffered.writeMode).toBe("buffered");
      expect(await direct.temporaries()).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
