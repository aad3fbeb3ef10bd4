import express, { type Router } from "express";
import { publicBase } from "../../domain/archive-links.ts";
import { sendJson } from "../../routes/errors.ts";
import type { PublishService } from "../publish-service.ts";
import type { UploadService } from "../upload-service.ts";
import { toNodeVersion } from "../views.ts";
import { param } from "./publisher-routes.ts";

/** comfy-cli's publish body is a few KB; a pack's description is the largest part. */
const json = express.json({ limit: "256kb", strict: true, type: () => true });

/**
 * The two calls of `comfy node publish`: the POST that checks the token and answers a signed
 * upload URL, and the PUT of the archive to it. Neither takes an API key: the token in the body,
 * then the URL's signature, are the credentials, as on the public registry.
 */
export function publishRoutes(router: Router, deps: { publish: PublishService; upload: UploadService; publicUrl?: string }): void {
  router.post("/publishers/:publisherId/nodes/:nodeId/versions", json, async (req, res) => {
    const answer = await deps.publish.start(
      param(req.params.publisherId),
      param(req.params.nodeId),
      req.body,
      publicBase(req, deps.publicUrl),
    );
    res.status(201);
    sendJson(res, answer);
  });
  router.put("/publishers/:publisherId/nodes/:nodeId/versions/:version/node.zip", async (req, res) => {
    const signature = typeof req.query.signature === "string" ? req.query.signature : "";
    const target = { publisherId: param(req.params.publisherId), nodeId: param(req.params.nodeId), version: param(req.params.version) };
    const version = await deps.upload.receive(req, target, signature);
    sendJson(res, { node_version: toNodeVersion(version) });
  });
}
