import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsBlobStore } from "../src/fs-blob-store.ts";
import { describeBlobStoreConformance } from "./blob-store-conformance.ts";

describeBlobStoreConformance("filesystem", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fs-blob-"));
  const root = join(dir, "blobs");
  const store = new FsBlobStore(root);
  return {
    store,
    temporaries: async () => readdir(join(root, "tmp")).catch(() => []),
    plantTemporary: async (name) => writeFile(join(root, "tmp", name), "partial"),
    sibling: ({ tempMaxAgeMs }) => new FsBlobStore(root, { tempMaxAgeMs }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
