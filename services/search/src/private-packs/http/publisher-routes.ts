import express, { Router } from "express";
import { sendJson } from "../../routes/errors.ts";
import type { PublisherService } from "../publisher-service.ts";
import { actorOf, requireKey, type KeyVerifier } from "./key-access.ts";

const json = express.json({ limit: "16kb", strict: true, type: () => true });

/**
 * Publishers and their publishing tokens, in the registry's shapes, behind an API key:
 * POST /publishers, POST|GET /publishers/{id}/tokens, DELETE /publishers/{id}/tokens/{tokenId}.
 */
export function publisherRoutes(router: Router, service: PublisherService, keys: KeyVerifier): void {
  const keyed = requireKey(keys);
  router.post("/publishers", keyed, json, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    res.status(201);
    sendJson(res, await service.create(actorOf(res.locals), { id: body.id, name: body.name }));
  });
  router.post("/publishers/:publisherId/tokens", keyed, json, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { token } = await service.createToken(actorOf(res.locals), param(req.params.publisherId), body);
    res.status(201);
    sendJson(res, { token });
  });
  router.get("/publishers/:publisherId/tokens", keyed, async (req, res) => {
    sendJson(res, await service.listTokens(actorOf(res.locals), param(req.params.publisherId)));
  });
  router.delete("/publishers/:publisherId/tokens/:tokenId", keyed, async (req, res) => {
    await service.revokeToken(actorOf(res.locals), param(req.params.publisherId), param(req.params.tokenId));
    res.status(204).end();
  });
}

/** A route parameter (Express types a wildcard's as a list; these routes have none). */
export function param(v: string | string[] | undefined): string {
  return Array.isArray(v) ? v.join("/") : (v ?? "");
}
