import type { Request, Response } from "express";
import { AssetHash, CreateFromHashBody, TagsBody, UpdateAssetBody, type AssetCreated, type AssetsList, type TagsAdded, type TagsList, type TagsRemoved } from "@app/contracts";
import type { AssetReference } from "../adapters/reference-store.ts";
import { sortValue } from "../adapters/reference-store.ts";
import { encodeCursor, normaliseAssetId } from "../domain/asset-cursor.ts";
import { toAsset } from "../domain/asset-view.ts";
import { UploadFailure } from "../domain/errors.ts";
import { sendBlob } from "./blob-response.ts";
import { parseListQuery, parseTagsQuery } from "./asset-query.ts";
import type { UploadDeps } from "./deps.ts";
import { parseBody } from "./json-body.ts";

/**
 * ComfyUI's asset API (`app/assets/api/routes.py` in the ComfyUI server) over the
 * content-addressed store: records in the ReferenceStore, bytes in the BlobStore.
 */
export function assetHandlers(deps: UploadDeps) {
  const { refs, store } = deps;

  async function findRecord(req: Request): Promise<AssetReference> {
    const raw = String(req.params.id ?? "");
    const id = normaliseAssetId(raw);
    const ref = id ? await refs.get(id) : null;
    if (!ref) throw new UploadFailure("asset_not_found", `no asset ${raw.slice(0, 100)}`);
    return ref;
  }

  return {
    /** HEAD /api/assets/hash/{hash}: the cheap dedup check, a stat of the store (the bytes are never read). */
    async headByHash(req: Request, res: Response): Promise<void> {
      const raw = String(req.params.hash ?? "");
      if (!AssetHash.safeParse(raw).success) throw new UploadFailure("invalid_hash", "hash must be 'blake3:' followed by 64 lower-case hex digits");
      const exists = (await store.stat(raw.slice("blake3:".length))) !== null;
      // An explicit empty length, as ComfyUI's server answers: a client reading it as a GET-shaped reply is not left waiting.
      res.status(exists ? 200 : 404).setHeader("Content-Length", "0").end();
    },

    /** POST /api/assets/from-hash: a record for bytes already stored, no upload. */
    async createFromHash(req: Request, res: Response): Promise<void> {
      const body = parseBody(CreateFromHashBody, req.body);
      const hash = body.hash.slice("blake3:".length);
      const reference = await refs.withHashLock(hash, async () => {
        const stat = await store.stat(hash);
        if (!stat) throw new UploadFailure("asset_not_found", `no stored content ${body.hash}`);
        const record = await store.getRecord(hash);
        const { reference } = await refs.create({
          hash,
          name: body.name ?? (record ? `${hash}.${record.ext}` : hash),
          size: stat.size,
          mimeType: record?.mime ?? "application/octet-stream",
          tags: body.tags,
          userMetadata: body.user_metadata,
        });
        return reference;
      });
      const answer: AssetCreated = { ...toAsset(reference), created_new: true };
      res.status(201).json(answer);
    },

    /** GET /api/assets. */
    async list(req: Request, res: Response): Promise<void> {
      const query = parseListQuery(req);
      const page = await refs.list(query);
      const last = page.items.at(-1);
      const answer: AssetsList = {
        assets: page.items.map(toAsset),
        total: page.total,
        has_more: page.hasMore,
        ...(page.hasMore && last && { next_cursor: encodeCursor(query.sort, query.order, { value: sortValue(last, query.sort), id: last.id }) }),
      };
      res.json(answer);
    },

    /** GET /api/assets/{id}. */
    async get(req: Request, res: Response): Promise<void> {
      res.json(toAsset(await findRecord(req)));
    },

    /** GET /api/assets/{id}/content: the bytes, under /api/view's caching and Range rules. */
    async content(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req);
      const stat = await store.stat(ref.hash);
      if (!stat) throw new UploadFailure("not_found", `the content of asset ${ref.id} is no longer stored`);
      const disposition = req.query.disposition === "inline" ? "inline" : "attachment";
      await sendBlob(req, res, deps, {
        hash: ref.hash,
        size: stat.size,
        mime: ref.mimeType,
        disposition: `${disposition}; filename*=UTF-8''${encodeURIComponent(ref.name.replace(/[\r\n]/g, ""))}`,
        label: `blake3:${ref.hash}`,
      });
    },

    /** PUT /api/assets/{id}: name, tags, user_metadata. */
    async update(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req);
      const body = parseBody(UpdateAssetBody, req.body);
      const updated = await refs.update(ref.id, {
        ...(body.name !== undefined && { name: body.name }),
        ...(body.tags !== undefined && { tags: body.tags }),
        ...(body.user_metadata !== undefined && { userMetadata: body.user_metadata }),
      });
      if (!updated) throw new UploadFailure("asset_not_found", `no asset ${ref.id}`);
      res.json(toAsset(updated));
    },

    /** POST /api/assets/{id}/tags. */
    async addTags(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req);
      const { tags } = parseBody(TagsBody, req.body);
      const result = await refs.addTags(ref.id, tags);
      if (!result) throw new UploadFailure("asset_not_found", `no asset ${ref.id}`);
      const answer: TagsAdded = { added: result.added, already_present: result.alreadyPresent, total_tags: result.reference.tags };
      res.json(answer);
    },

    /** DELETE /api/assets/{id}/tags. */
    async removeTags(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req);
      const { tags } = parseBody(TagsBody, req.body);
      const result = await refs.removeTags(ref.id, tags);
      if (!result) throw new UploadFailure("asset_not_found", `no asset ${ref.id}`);
      const answer: TagsRemoved = { removed: result.removed, not_present: result.notPresent, total_tags: result.reference.tags };
      res.json(answer);
    },

    /** DELETE /api/assets/{id}: the record; the bytes too once no record names them. */
    async remove(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req);
      const deleted = await refs.withHashLock(ref.hash, async () => {
        const gone = await refs.delete(ref.id);
        if (gone && gone.remaining === 0) await store.remove(ref.hash);
        return gone;
      });
      if (!deleted) throw new UploadFailure("asset_not_found", `no asset ${ref.id}`);
      res.status(204).end();
    },

    /** Any other method or path under /api/assets and /api/tags. */
    async noRoute(req: Request): Promise<void> {
      throw new UploadFailure("not_found", `no route ${req.method} ${req.path.slice(0, 200)}`);
    },

    /** GET /api/tags: tags with how many records carry each. */
    async tags(req: Request, res: Response): Promise<void> {
      const query = parseTagsQuery(req);
      const { tags, total } = await refs.tagCounts(query);
      const answer: TagsList = { tags, total, has_more: query.offset + tags.length < total };
      res.json(answer);
    },
  };
}
