import { mkdtempSync, rmSync } from "node:fs";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import { createBlobStore, type ChosenBlobStore } from "@app/blobs";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import type { Mode } from "@app/testkit/asset-modes";

export interface AssetGateway {
  app: RequestListener;
  /** The gateway's blob store, opened on its own (to look at what is stored). */
  store: ChosenBlobStore;
  close(): Promise<void>;
}

/** The real gateway composed from config in `mode`, over a fresh DATA_DIR, accepting `keys` (each its own owner). */
export async function startAssetGateway(mode: Mode, keys: string[]): Promise<AssetGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-assets-"));
  const backend = await mode.setup(dataDir);
  const config = loadConfig({ DATA_DIR: dataDir, API_KEYS: keys.join(","), LOG_LEVEL: "silent", ...backend.env });
  const logger = createLogger("gw-assets", "silent");
  const composed = await composeGateway(config, logger);
  const closables: Closable[] = composed.closables;
  const store = await createBlobStore(config);
  return {
    app: createGatewayApp({ services: composed.services, logger }),
    store,
    async close() {
      for (const c of closables) await c.close();
      await store.close();
      await backend.teardown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
