import type { Router } from "express";
import { sendJson } from "../errors.ts";

/**
 * The channel files with nothing of the catalog's in them, answered empty rather than 404:
 * Manager indexes `models`, `items` and `favorites` in what it reads (the list reads
 * `extras.json` from its `default` channel and fails on a 404's body), and this service mirrors
 * no models and knows no alternatives or favourites.
 */
export function emptyListRoutes(router: Router): void {
  router.get("/channel/model-list.json", (_req, res) => sendJson(res, { models: [] }));
  router.get("/channel/alter-list.json", (_req, res) => sendJson(res, { items: [] }));
  router.get("/channel/extras.json", (_req, res) => sendJson(res, { favorites: [] }));
}
