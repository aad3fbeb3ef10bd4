import { Router } from "express";
import { buildOpenApiDocument } from "@app/contracts";

/** GET /openapi.json: built once from the contracts' zod schemas. */
export function openApiRouter(): Router {
  const body = JSON.stringify(buildOpenApiDocument());
  const router = Router();
  router.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
}
