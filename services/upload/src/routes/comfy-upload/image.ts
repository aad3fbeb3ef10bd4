import type { Request, Response } from "express";
import type { UploadResult } from "@app/contracts";
import { validateSubfolder, validateType } from "../../domain/fields.ts";
import { assetName } from "../../domain/naming.ts";
import { ownerOf } from "../../http/auth.ts";
import type { UploadDeps } from "../../http/deps.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";
import { uploadOrigin, uploadTags } from "../../library/reference-fields.ts";
import { probe, requireImage, storedImage, withUploadForm } from "./upload-form.ts";

/** POST /api/upload/image (and /upload/image). */
export function uploadImageHandler(deps: UploadDeps, library: AssetLibrary) {
  return (req: Request, res: Response): Promise<void> =>
    withUploadForm(req, res, deps, async (parsed) => {
      const subfolder = validateSubfolder(parsed.fields.get("subfolder"));
      const type = validateType(parsed.fields.get("type"));
      const image = requireImage(parsed);
      const info = await probe(parsed, image);
      await library.commitUpload(image, storedImage(info), [type], {
        owner: ownerOf(res),
        origin: uploadOrigin("upload", type, subfolder),
        tags: uploadTags(type, subfolder),
      });
      const body: UploadResult = { name: assetName(image.hash, info.format.ext), subfolder, type };
      res.status(200).json(body);
    });
}
