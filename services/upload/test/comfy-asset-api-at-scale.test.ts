import { atScaleMode } from "@app/testkit/asset-modes";
import { describeComfyAssetApi } from "./comfy-asset-api-cases.ts";

// ComfyUI's asset API tests at scale (Redis + s3rver + PostgreSQL): a file of their own, so both modes run at once.
describeComfyAssetApi(atScaleMode);
