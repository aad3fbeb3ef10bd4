import type { IncomingMessage } from "node:http";
import type { Request, Response, Router } from "express";
import { UPLOAD_ID_RE } from "@app/blobs";
import { ApiFailure } from "../../domain/errors.ts";
import { ownerOf } from "../../http/auth.ts";
import { byteBudgetOf } from "../../http/rate-limit.ts";
import type { TusRequest } from "../../http/tus-server.ts";
import type { AssetRouteContext } from "../assets/context.ts";

/**
 * tus 1.0.0 at `/api/assets/uploads` (and `/assets/uploads`), served by the runtime's TusServer
 * (http/tus-server.ts). OPTIONS tells the protocol's capabilities and needs no key. The key's
 * owner creates an upload and only that owner reaches it (any other key: 404). POST and PATCH
 * are uploads for the key's limits (their bodies count against `upload_mbpm`); a body that stalls
 * for BODY_TIMEOUT_MS is cut (the bytes stored so far stay, and the client resumes from them).
 * The PATCH that lands the last byte, and any HEAD after it, answers `Asset-Id`.
 */
export function tusRoutes(router: Router, prefix: string, { deps, access }: AssetRouteContext): void {
  const { tus, settings } = deps;
  const handler = async (req: Request, res: Response): Promise<void> => {
    const owner = ownerOf(res);
    const id = typeof req.params.id === "string" ? req.params.id : null;
    if (id !== null) {
      const upload = UPLOAD_ID_RE.test(id) ? await deps.blobs.partials.get(id) : null;
      if (!upload || upload.owner !== owner) {
        res.setHeader("Tus-Resumable", "1.0.0");
        throw new ApiFailure("not_found", `no upload ${id.slice(0, 64)} of yours`);
      }
      if (upload.assetId) res.setHeader("Asset-Id", upload.assetId);
      // Every byte landed but no asset was made (the process stopped in between): the next
      // HEAD or PATCH makes it, so a resuming client gets its Asset-Id as if nothing happened.
      else if (upload.offset === upload.size && req.method !== "DELETE") res.setHeader("Asset-Id", await tus.finish(id, upload.owner));
    }
    const withBody = req.method === "PATCH" || (req.method === "POST" && req.headers["content-type"] === "application/offset+octet-stream");
    const request: TusRequest = { owner };
    if (!withBody) return void (await tus.handle(req, res, request));
    const budget = byteBudgetOf(res);
    const declared = Number(req.headers["content-length"] ?? NaN);
    await budget.charge(Number.isFinite(declared) ? declared : settings.assetMaxBytes);
    const stopTimer = bodyIdleTimer(req, settings.bodyTimeoutMs);
    try {
      await tus.handle(req, res, request);
    } finally {
      stopTimer();
      const uploadId = id ?? request.createdId;
      budget.settle(uploadId ? tus.data.takeReceived(uploadId) : 0);
    }
  };
  router.options([`${prefix}/assets/uploads`, `${prefix}/assets/uploads/:id`], (req, res) => tus.handleOptions(req, res));
  router.post(`${prefix}/assets/uploads`, access.upload, handler);
  router.patch(`${prefix}/assets/uploads/:id`, access.upload, handler);
  router.head(`${prefix}/assets/uploads/:id`, access.read, handler);
  router.delete(`${prefix}/assets/uploads/:id`, access.read, handler);
}

/** Cut a body that sends nothing for `ms` (the bytes stored so far stay); no limit once it has all arrived. */
function bodyIdleTimer(req: IncomingMessage, ms: number): () => void {
  const previous = req.socket.timeout ?? 0;
  const stop = () => {
    req.off("end", stop);
    req.off("timeout", stalled);
    if (!req.socket.destroyed) req.socket.setTimeout(previous);
  };
  const stalled = () => req.destroy(new Error(`no byte of the body for ${ms} ms`));
  req.setTimeout(ms, stalled);
  req.once("end", stop);
  return stop;
}
