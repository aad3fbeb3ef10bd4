import { mkdtempSync, rmSync } from "node:fs";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBlobStore, type ChosenBlobStore } from "@app/blobs";
import { createLogger, loadConfig } from "@app/platform";
import type { Mode } from "@app/testkit/asset-modes";
import { createApp } from "../src/app.ts";
import { createUploadRuntime } from "../src/compose.ts";

export interface AssetService {
  app: RequestListener;
  /** The service's blob store, opened on its own (to look at what is stored). */
  blobs: ChosenBlobStore;
  close(): Promise<void>;
}

/** The upload service composed from config in `mode` (createUploadRuntime), over a fresh DATA_DIR, accepting `keys` (each its own owner). */
export async function startAssetService(mode: Mode, keys: string[]): Promise<AssetService> {
  const dataDir = mkdtempSync(join(tmpdir(), "upload-assets-"));
  const backend = await mode.setup(dataDir);
  const config = loadConfig({ DATA_DIR: dataDir, API_KEYS: keys.join(","), LOG_LEVEL: "silent", ...backend.env });
  const runtime = await createUploadRuntime(config, createLogger("upload-assets", "silent"));
  const blobs = await createBlobStore(config);
  return {
    app: createApp(runtime),
    blobs,
    async close() {
      await runtime.close();
      await blobs.close();
      await backend.teardown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
