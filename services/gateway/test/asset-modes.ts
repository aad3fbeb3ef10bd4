import { createLogger, loadConfig } from "@app/platform";
import { createBlobStore, type ChosenBlobStore } from "@app/blobs";
import { startInMode, type AssetApp, type Mode } from "@app/testkit/asset-modes";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";

export type AssetGateway = AssetApp<ChosenBlobStore>;

/** The real gateway composed from config in `mode`, over a fresh DATA_DIR, accepting `keys` (each its own owner). */
export function startAssetGateway(mode: Mode, keys: string[]): Promise<AssetGateway> {
  return startInMode(mode, keys, async (env) => {
    const config = loadConfig(env);
    const logger = createLogger("gw-assets", "silent");
    const composed = await composeGateway(config, logger);
    const blobs = await createBlobStore(config);
    return {
      app: createGatewayApp({ services: composed.services, logger }),
      blobs,
      async close() {
        for (const c of composed.closables) await c.close();
        await blobs.close();
      },
    };
  });
}
