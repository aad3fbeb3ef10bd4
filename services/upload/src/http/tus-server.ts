import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { Blake3Hasher } from "@napi-rs/blake-hash";
import { Server } from "@tus/server";
import type { UploadAssetFields } from "@app/contracts";
import type { Logger } from "@app/platform";
import type { PartialUpload } from "@app/blobs";
import { BlobDataStore } from "../adapters/tus/blob-data-store.ts";
import { ApiFailure } from "../domain/errors.ts";
import type { AssetLibrary } from "../library/asset-library.ts";
import { fieldsOf, providedHash } from "./asset-fields.ts";
import { assetShape, toApiFailure } from "./error-handler.ts";
import { HEAD_BYTES } from "./multipart.ts";

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
  if (!fileName)
    throw new ApiFailure("invalid_body", "Upload-Metadata: filename is required (the asset's name)", { details: { field: "filename" } });
  const fields = new Map<string, string>();
  for (const k of ["user_metadata", "mime_type"]) {
    const v = value(k);
    if (v !== undefined) fields.set(k, v);
  }
  const tags = value("tags");
  return {
    fileName,
    fields: fieldsOf({ fields, lists: new Map(tags === undefined ? [] : [["tags", [tags]]]) }),
    hash: providedHash(value("hash")),
  };
}

/**
 * Who one tus request is for. The hooks' `req` is the web Request @tus/server builds, which
 * carries nothing of ours, so each request runs inside this context (AsyncLocalStorage) and the
 * hooks read the owner from it and leave the id of an upload they created.
 */
export interface TusRequest {
  owner: string;
  /** Set when the request created an upload (POST). */
  createdId?: string;
}

export interface TusServerOptions {
  data: BlobDataStore;
  library: AssetLibrary;
  /** ASSET_UPLOAD_MAX_BYTES: the largest Upload-Length. */
  maxBytes: number;
  logger: Logger;
}

/**
 * tus 1.0.0 (Core, creation, creation-with-upload, termination, expiration), served by
 * @tus/server over the blob store's partial uploads (BlobDataStore). The last byte makes the
 * asset with POST /api/assets' own code (`AssetLibrary.storeNewUpload`), and that PATCH answers
 * `Asset-Id`. Built once per runtime (compose.ts): the routes and the expiry sweep share its
 * data store, whose hashers hold the bytes this process has seen.
 */
export class TusServer {
  readonly data: BlobDataStore;
  private readonly server: Server;
  private readonly requests = new AsyncLocalStorage<TusRequest>();
  /** One asset per upload in this process: the completing PATCH and a HEAD racing it share the work. */
  private readonly finishing = new Map<string, Promise<string>>();

  constructor(private readonly options: TusServerOptions) {
    this.data = options.data;
    this.server = new Server({
      path: "/api/assets/uploads",
      datastore: this.data,
      maxSize: options.maxBytes,
      // Relative, under the prefix the client used: right behind any proxy, with or without /api.
      generateUrl: (req, { id }) => `${new URL(req.url).pathname.replace(/\/+$/, "")}/${id}`,
      exposedHeaders: ["Asset-Id"],
      // Same origin only: a page elsewhere gets no CORS grant (it would hold a key of ours).
      allowedOrigins: () => false,
      onUploadCreate: async (_req, upload) => {
        const request = this.current();
        const asked = assetRequestOf(upload.metadata);
        if (upload.size === 0) throw new ApiFailure("empty_upload", "Upload-Length is 0: an asset has at least one byte.");
        await options.library.checkDestination(asked.fields.tags, asked.hash);
        this.data.claim(upload, request.owner);
        request.createdId = upload.id;
        return {};
      },
      onUploadFinish: async (_req, upload) => {
        const assetId = await this.finish(upload.id, this.current().owner);
        return { headers: { "Asset-Id": assetId } };
      },
      onResponseError: (req, err) => {
        if (!(err instanceof Error) || "status_code" in err) return undefined;
        const failure = toApiFailure(err);
        if (failure.code === "internal") options.logger.error({ err, path: new URL(req.url).pathname }, "tus request failed");
        return { status_code: failure.status, body: JSON.stringify(assetShape(failure)) };
      },
    });
  }

  /** Serve one tus request for `request.owner`; a POST leaves the id of the upload it created in `request.createdId`. */
  handle(req: IncomingMessage, res: ServerResponse, request: TusRequest): Promise<void> {
    return this.requests.run(request, () => this.server.handle(req, res));
  }

  /** OPTIONS: the protocol's capabilities, for anyone (no hook runs). */
  handleOptions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return this.server.handle(req, res);
  }

  /** The asset of an upload whose every byte has landed, made once however many requests ask. */
  finish(id: string, owner: string): Promise<string> {
    let running = this.finishing.get(id);
    if (!running) {
      running = this.makeAsset(id, owner).finally(() => this.finishing.delete(id));
      this.finishing.set(id, running);
    }
    return running;
  }

  /** Remove the resumable uploads past TUS_EXPIRY (finished or not); how many. */
  sweepExpired(now = Date.now()): Promise<number> {
    return this.data.deleteExpired(now);
  }

  private current(): TusRequest {
    const request = this.requests.getStore();
    if (!request) throw new Error("a tus hook ran outside TusServer.handle");
    return request;
  }

  /**
   * The last byte landed: hash (as it arrived, or read back once when another process took part
   * of it), then make the asset. Any failure removes the upload (its bytes cannot become an
   * asset: a resumed client starts over) and is answered as the asset API answers it (e.g. 400
   * HASH_MISMATCH).
   */
  private async makeAsset(id: string, owner: string): Promise<string> {
    const { data, library } = this.options;
    const stored: PartialUpload | null = await data.partials.get(id);
    if (!stored) throw new ApiFailure("not_found", `upload ${id} is gone`);
    if (stored.assetId) return stored.assetId;
    try {
      const asked = assetRequestOf(stored.metadata);
      const assembled = await data.partials.assemble(id);
      const hash = data.hashOf(id, assembled.size) ?? (await hashStream(await assembled.read()));
      const staged = assembled.stage(hash);
      try {
        const head =
          assembled.size === 0
            ? Buffer.alloc(0)
            : await readAll(await assembled.read({ start: 0, end: Math.min(assembled.size, HEAD_BYTES) - 1 }));
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
