import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import type { Request, RequestHandler, Response, Router } from "express";
import { Blake3Hasher } from "@napi-rs/blake-hash";
import { Server } from "@tus/server";
import type { UploadAssetFields } from "@app/contracts";
import { ApiFailure } from "../../domain/errors.ts";
import { BlobDataStore } from "../../tus/blob-data-store.ts";
import { UPLOAD_ID_RE, type PartialUpload } from "@app/blobs";
import { ownerOf } from "../../http/auth.ts";
import type { UploadDeps } from "../../http/deps.ts";
import { assetShape, toApiFailure } from "../../http/error-handler.ts";
import { HEAD_BYTES } from "../../http/multipart.ts";
import { byteBudgetOf } from "../../http/rate-limit.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";
import type { AssetRouteContext } from "./context.ts";
import { fieldsOf, providedHash } from "../../http/asset-fields.ts";

/** One tus data store per set of deps: the routes and the expiry sweep share its hashers. */
const stores = new WeakMap<UploadDeps, BlobDataStore>();

function dataStoreOf(deps: UploadDeps): BlobDataStore {
  let store = stores.get(deps);
  if (!store) {
    store = new BlobDataStore(deps.blobs.partials, deps.settings.tusExpiryMs);
    stores.set(deps, store);
  }
  return store;
}

/** Remove the resumable uploads past TUS_EXPIRY (finished or not); how many. */
export function sweepExpiredUploads(deps: UploadDeps, now = Date.now()): Promise<number> {
  return dataStoreOf(deps).deleteExpired(now);
}

/** What an upload's Upload-Metadata asks of the asset (validated as POST /api/assets validates its fields). */
interface AssetRequest {
  fileName: string;
  fields: UploadAssetFields;
  hash: string | null;
}

/**
 * Upload-Metadata → the asset's fields: `filename` (required), `tags` (comma-separated),
 * optional `mime_type`, `user_metadata` (JSON) and `hash` (`blake3:<hex>`). Other keys (Uppy adds
 * `name`, `type`, `filetype`, `relativePath`) are ignored. 400 `INVALID_BODY` / `INVALID_HASH`.
 */
function assetRequestOf(metadata: Record<string, string | null> | undefined): AssetRequest {
  const value = (k: string) => metadata?.[k] ?? undefined;
  const fileName = value("filename")?.trim();
  if (!fileName) throw new ApiFailure("invalid_body", "Upload-Metadata: filename is required (the asset's name)", { details: { field: "filename" } });
  const fields = new Map<string, string>();
  for (const k of ["user_metadata", "mime_type"]) {
    const v = value(k);
    if (v !== undefined) fields.set(k, v);
  }
  const tags = value("tags");
  return { fileName, fields: fieldsOf({ fields, lists: new Map(tags === undefined ? [] : [["tags", [tags]]]) }), hash: providedHash(value("hash")) };
}

/** The Express response a tus hook's request came from (the key's owner is on it). */
function expressResponseOf(req: globalThis.Request): Response {
  const res = (req as { runtime?: { node?: { res?: unknown } } }).runtime?.node?.res;
  if (!res) throw new Error("tus hook without its Node response");
  return res as Response;
}

/** One tus handler per route context (the routes are registered once per prefix). */
const handlers = new WeakMap<AssetRouteContext, RequestHandler>();

/** The tus routes under `prefix`: OPTIONS tells the protocol's capabilities and needs no key; POST and PATCH take upload bodies. */
export function uploadsRoutes(router: Router, prefix: string, context: AssetRouteContext): void {
  let tus = handlers.get(context);
  if (!tus) {
    tus = tusUploadHandler(context.deps, context.library);
    handlers.set(context, tus);
  }
  const { access } = context;
  router.options([`${prefix}/assets/uploads`, `${prefix}/assets/uploads/:id`], tus);
  router.post(`${prefix}/assets/uploads`, access.upload, tus);
  router.patch(`${prefix}/assets/uploads/:id`, access.upload, tus);
  router.head(`${prefix}/assets/uploads/:id`, access.read, tus);
  router.delete(`${prefix}/assets/uploads/:id`, access.read, tus);
}

/**
 * tus 1.0.0 at `/api/assets/uploads` (and `/assets/uploads`): Core, creation,
 * creation-with-upload, termination, expiration, served by @tus/server over the blob store's
 * partial uploads. The key's owner creates an upload and only that owner reaches it (any other
 * key: 404). POST and PATCH are uploads for the key's limits (their bodies count against
 * `upload_mbpm`); a body that stalls for BODY_TIMEOUT_MS is cut (the bytes stored so far stay,
 * and the client resumes from them). The last byte makes the asset exactly as POST /api/assets
 * does, and that PATCH (and any HEAD after it) answers `Asset-Id`.
 */
function tusUploadHandler(deps: UploadDeps, library: AssetLibrary): RequestHandler {
  const data = dataStoreOf(deps);
  // One asset per upload in this process: the completing PATCH and a HEAD racing it share the work.
  const finishing = new Map<string, Promise<string>>();
  const finish = (id: string, owner: string): Promise<string> => {
    let running = finishing.get(id);
    if (!running) {
      running = makeAsset(library, data, id, owner).finally(() => finishing.delete(id));
      finishing.set(id, running);
    }
    return running;
  };
  const options: ConstructorParameters<typeof Server>[0] = {
    path: "/api/assets/uploads",
    datastore: data,
    maxSize: deps.settings.assetMaxBytes,
    // Relative, under the prefix the client used: right behind any proxy, with or without /api.
    generateUrl: (req, { id }) => `${new URL(req.url).pathname.replace(/\/+$/, "")}/${id}`,
    exposedHeaders: ["Asset-Id"],
    // Same origin only: a page elsewhere gets no CORS grant (it would hold a key of ours).
    allowedOrigins: () => false,
    async onUploadCreate(req, upload) {
      const res = expressResponseOf(req);
      const asked = assetRequestOf(upload.metadata);
      if (upload.size === 0) throw new ApiFailure("empty_upload", "Upload-Length is 0: an asset has at least one byte.");
      await library.checkDestination(asked.fields.tags, asked.hash);
      data.claim(upload, ownerOf(res));
      res.locals.tusUploadId = upload.id;
      return {};
    },
    async onUploadFinish(req, upload) {
      const assetId = await finish(upload.id, ownerOf(expressResponseOf(req)));
      return { headers: { "Asset-Id": assetId } };
    },
    onResponseError(req, err) {
      if (!(err instanceof Error) || "status_code" in err) return undefined;
      const failure = toApiFailure(err);
      if (failure.code === "internal") deps.logger.error({ err, path: new URL(req.url).pathname }, "tus request failed");
      return { status_code: failure.status, body: JSON.stringify(assetShape(failure)) };
    },
  };
  const tus = new Server(options);

  return async (req: Request, res: Response): Promise<void> => {
    const id = typeof req.params.id === "string" ? req.params.id : null;
    if (id !== null) {
      const upload = UPLOAD_ID_RE.test(id) ? await deps.blobs.partials.get(id) : null;
      if (!upload || upload.owner !== ownerOf(res)) {
        res.setHeader("Tus-Resumable", "1.0.0");
        throw new ApiFailure("not_found", `no upload ${id.slice(0, 64)} of yours`);
      }
      if (upload.assetId) res.setHeader("Asset-Id", upload.assetId);
      // Every byte landed but no asset was made (the process stopped in between): the next
      // HEAD or PATCH makes it, so a resuming client gets its Asset-Id as if nothing happened.
      else if (upload.offset === upload.size && req.method !== "DELETE") res.setHeader("Asset-Id", await finish(id, upload.owner));
    }
    const withBody = req.method === "PATCH" || (req.method === "POST" && req.headers["content-type"] === "application/offset+octet-stream");
    if (!withBody) return void (await tus.handle(req, res));
    const budget = byteBudgetOf(res);
    const declared = Number(req.headers["content-length"] ?? NaN);
    await budget.charge(Number.isFinite(declared) ? declared : deps.settings.assetMaxBytes);
    const stopTimer = bodyIdleTimer(req, deps.settings.bodyTimeoutMs);
    try {
      await tus.handle(req, res);
    } finally {
      stopTimer();
      const uploadId = id ?? (res.locals.tusUploadId as string | undefined);
      budget.settle(uploadId ? data.takeReceived(uploadId) : 0);
    }
  };
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

/**
 * The last byte landed: hash (as it arrived, or read back once when another process took part
 * of it), then make the asset with POST /api/assets' own code. Any failure removes the upload
 * (its bytes cannot become an asset: a resumed client starts over) and is answered as the
 * asset API answers it (e.g. 400 HASH_MISMATCH).
 */
async function makeAsset(library: AssetLibrary, data: BlobDataStore, id: string, owner: string): Promise<string> {
  const stored: PartialUpload | null = await data.partials.get(id);
  if (!stored) throw new ApiFailure("not_found", `upload ${id} is gone`);
  if (stored.assetId) return stored.assetId;
  try {
    const asked = assetRequestOf(stored.metadata);
    const assembled = await data.partials.assemble(id);
    const hash = data.hashOf(id, assembled.size) ?? (await hashStream(await assembled.read()));
    const staged = assembled.stage(hash);
    try {
      const head = assembled.size === 0 ? Buffer.alloc(0) : await readAll(await assembled.read({ start: 0, end: Math.min(assembled.size, HEAD_BYTES) - 1 }));
      const { reference } = await library.storeNewUpload(owner, staged, { head, fileName: asked.fileName }, asked.fields, asked.hash);
      await data.partials.finish(id, reference.id);
      return reference.id;
    } finally {
      await staged.discard();
    }
  } catch (err) {
    data.forget(id);
    await data.partials.remove(id).catch(() => undefined);
    throw err;
  }
}

async function hashStream(source: Readable): Promise<string> {
  const hasher = new Blake3Hasher();
  for await (const chunk of source) hasher.update(chunk as Buffer);
  return hasher.digest("hex");
}

async function readAll(source: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
