import type { RequestHandler } from "express";
import { PrivatePackError } from "../domain/errors.ts";
import type { Actor } from "../publisher-service.ts";

/** The project's API keys as this module needs them: a presented key's principal (its label), or null. */
export interface KeyVerifier {
  verify(presented: string): { label: string } | null;
}

/**
 * The registry's Firebase login, stood in for by our API keys: `X-API-Key` (or `Authorization:
 * Bearer`) names the principal that owns publishers. The principal is left in `res.locals.actor`.
 */
export function requireKey(keys: KeyVerifier): RequestHandler {
  return (req, res, next) => {
    const header = req.headers["x-api-key"];
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    const presented = typeof header === "string" && header.trim() !== "" ? header.trim() : bearer;
    if (!presented) return next(new PrivatePackError(401, "missing API key: send the X-API-Key header", "unauthorized"));
    const key = keys.verify(presented);
    if (!key) return next(new PrivatePackError(401, "unknown API key", "unauthorized"));
    res.locals.actor = { owner: key.label } satisfies Actor;
    next();
  };
}

export function actorOf(locals: Record<string, unknown>): Actor {
  const actor = locals.actor as Actor | undefined;
  if (!actor) throw new Error("actorOf: the route has no requireKey in front of it");
  return actor;
}
