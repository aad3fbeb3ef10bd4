import express, { type Router } from "express";
import { sendJson } from "../../routes/errors.ts";
import type { VersionAdminService } from "../version-admin-service.ts";
import { actorOf, requireKey, type KeyVerifier } from "./key-access.ts";
import { param } from "./publisher-routes.ts";

const json = express.json({ limit: "16kb", strict: true, type: () => true });

/** The registry's routes for a published version's status, deprecation and removal, behind the owner's API key. */
export function versionAdminRoutes(router: Router, service: VersionAdminService, keys: KeyVerifier): void {
  const keyed = requireKey(keys);
  router.put("/admin/nodes/:nodeId/versions/:version", keyed, json, async (req, res) => {
    sendJson(res, await service.setStatus(actorOf(res.locals), param(req.params.nodeId), param(req.params.version), req.body));
  });
  router.put("/publishers/:publisherId/nodes/:nodeId/versions/:versionId", keyed, json, async (req, res) => {
    sendJson(
      res,
      await service.update(
        actorOf(res.locals),
        param(req.params.publisherId),
        param(req.params.nodeId),
        param(req.params.versionId),
        req.body,
      ),
    );
  });
  router.delete("/publishers/:publisherId/nodes/:nodeId/versions/:versionId", keyed, async (req, res) => {
    await service.remove(actorOf(res.locals), param(req.params.publisherId), param(req.params.nodeId), param(req.params.versionId));
    res.status(204).end();
  });
}
