import { embeddedMode } from "@app/testkit/asset-modes";
import { describeComfyAssetApi } from "./comfy-asset-api-cases.ts";

// ComfyUI's asset API tests, embedded (fs + SQLite); the same cases at scale: comfy-asset-api-at-scale.test.ts.
describeComfyAssetApi(embeddedMode);
