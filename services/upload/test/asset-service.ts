import { createBlobStore, type ChosenBlobStore } from "@app/blobs";
import { createLogger, loadConfig } from "@app/platform";
import { startInMode, type AssetApp, type Mode } from "@app/testkit/asset-modes";
import { createApp } from "../src/app.ts";
import { createUploadRuntime } from "../src/compose.ts";

export type AssetService = AssetApp<ChosenBlobStore>;

/** The upload service composed from config in `mode` (createUploadRuntime), accepting `keys` (each its own owner). */
export function startAssetService(mode: Mode, keys: string[]): Promise<AssetService> {
  return startInMode(mode, keys, async (env) => {
    const config = loadConfig(env);
    const runtime = await createUploadRuntime(config, createLogger("upload-assets", "silent"));
    const blobs = await createBlobStore(config);
    return {
      app: createApp(runtime),
      blobs,
      async close() {
        await runtime.close();
        await blobs.close();
      },
    };
  });
}
