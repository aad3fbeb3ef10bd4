import type { Request, Response } from "express";
import {
  AssetHash,
  CreateFromHashBody,
  TagsBody,
  UpdateAssetBody,
  type AssetCreated,
  type AssetsList,
  type TagHistogram,
  type TagsAdded,
  type TagsList,
  type TagsRemoved,
} from "@app/contracts";
import { TooManyTagsError } from "../adapters/references/reference-store.ts";
import { sortValue, type AssetReference } from "../domain/asset-reference.ts";
import { encodeCursor, normaliseAssetId } from "../domain/asset-cursor.ts";
import { toAsset } from "../domain/asset-view.ts";
import { bareMime, isDangerousType } from "../domain/content-type.ts";
import { UploadFailure } from "../domain/errors.ts";
import { ownerOf } from "./auth.ts";
import { sendBlob } from "./blob-response.ts";
import { parseListQuery, parseRefineQuery, parseTagsQuery } from "./asset-query.ts";
import type { UploadDeps } from "./deps.ts";
import { parseBody } from "./json-body.ts";

/** Over the one tag limit (MAX_TAGS_PER_ASSET), on whichever path adds tags. */
export async function withinTagLimit<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof TooManyTagsError) throw new UploadFailure("invalid_body", `tags: ${err.message}`);
    throw err;
  }
}

const notFound = (id: string) => new UploadFailure("asset_not_found", `AssetReference ${id.slice(0, 100)} not found`, { details: { id: id.slice(0, 100) } });

/** `preview_id` must name another record of the same owner. */
export async function checkPreview(deps: UploadDeps, owner: string, previewId: string | null | undefined): Promise<void> {
  if (!previewId) return;
  if (!(await deps.refs.get(previewId, owner))) {
    throw new UploadFailure("invalid_body", `preview_id: no asset ${previewId} of yours`, { details: { preview_id: previewId } });
  }
}

/**
 * A record of the owner's for bytes already stored (from-hash, and POST /api/assets with a
 * known hash): named by the hash unless a name is given, typed as the bytes were recorded
 * (the client's `mime_type` only when the store has no record of them). 404 `ASSET_NOT_FOUND`
 * when the bytes are not stored.
 */
export async function recordKnownContent(
  deps: UploadDeps,
  owner: string,
  hash: string,
  input: { name?: string; tags: string[]; userMetadata: Record<string, unknown>; mimeType?: string; previewId?: string },
): Promise<AssetReference> {
  return withinTagLimit(() =>
    deps.refs.withHashLock(hash, async () => {
      const stat = await deps.store.stat(hash);
      if (!stat) throw new UploadFailure("asset_not_found", `Asset content blake3:${hash} does not exist`, { details: { hash: `blake3:${hash}` } });
      const record = await deps.store.getRecord(hash);
      const { reference } = await deps.refs.create({
        owner,
        hash,
        name: input.name ?? hash,
        size: stat.size,
        mimeType: record?.mime ?? (input.mimeType ? bareMime(input.mimeType) : "application/octet-stream"),
        tags: input.tags,
        userMetadata: input.userMetadata,
        ...(input.previewId && { previewId: input.previewId }),
      });
      return reference;
    }),
  );
}

/**
 * ComfyUI's asset API (`app/assets/api/routes.py` in the ComfyUI server) over the
 * content-addressed store: records in the ReferenceStore, bytes in the BlobStore. Every
 * record belongs to an owner (the key's principal, `ownerOf`); a key reaches only its owner's.
 */
export function assetHandlers(deps: UploadDeps) {
  const { refs, store } = deps;

  async function findRecord(req: Request, res: Response): Promise<AssetReference> {
    const raw = String(req.params.id ?? "");
    const id = normaliseAssetId(raw);
    const ref = id ? await refs.get(id, ownerOf(res)) : null;
    if (!ref) throw notFound(raw);
    return ref;
  }

  const gone = (ref: AssetReference) => notFound(ref.id);

  return {
    /**
     * HEAD /api/assets/hash/{hash}: the cheap dedup check, a stat of the store (the bytes are
     * never read). Global, as ComfyUI's: content is shared between owners (and /api/view
     * already serves any stored bytes to any key by their hash name), so it says nothing a key
     * could not learn otherwise, and it lets a client skip uploading bytes the store has.
     */
    async headByHash(req: Request, res: Response): Promise<void> {
      const raw = String(req.params.hash ?? "").trim().toLowerCase();
      if (!AssetHash.safeParse(raw).success) throw new UploadFailure("invalid_hash", "hash must be 'blake3:' followed by 64 lower-case hex digits");
      const exists = (await store.stat(raw.slice("blake3:".length))) !== null;
      // An explicit empty length, as ComfyUI's server answers: a client reading it as a GET-shaped reply is not left waiting.
      res.status(exists ? 200 : 404).setHeader("Content-Length", "0").end();
    },

    /** POST /api/assets/from-hash: a record for bytes already stored, no upload (`created_new` is false: the bytes were known). */
    async createFromHash(req: Request, res: Response): Promise<void> {
      const owner = ownerOf(res);
      const body = parseBody(CreateFromHashBody, req.body);
      await checkPreview(deps, owner, body.preview_id);
      const reference = await recordKnownContent(deps, owner, body.hash.slice("blake3:".length), {
        ...(body.name && { name: body.name }),
        tags: body.tags,
        userMetadata: body.user_metadata,
        ...(body.mime_type && { mimeType: body.mime_type }),
        ...(body.preview_id && { previewId: body.preview_id }),
      });
      const answer: AssetCreated = { ...(await toAsset(reference, refs)), created_new: false };
      res.status(201).json(answer);
    },

    /** GET /api/assets. */
    async list(req: Request, res: Response): Promise<void> {
      const query = parseListQuery(req, ownerOf(res));
      const page = await refs.list(query);
      const last = page.items.at(-1);
      const answer: AssetsList = {
        assets: await Promise.all(page.items.map((ref) => toAsset(ref, refs))),
        total: page.total,
        // A cursor page knows whether more follow; an offset page counts (both agree here, the page is read one past its limit).
        has_more: query.after ? page.hasMore : query.offset + page.items.length < page.total,
        ...(page.hasMore && last && { next_cursor: encodeCursor(query.sort, query.order, { value: sortValue(last, query.sort), id: last.id }) }),
      };
      res.json(answer);
    },

    /** GET /api/assets/{id}. */
    async get(req: Request, res: Response): Promise<void> {
      res.json(await toAsset(await findRecord(req, res), refs));
    },

    /**
     * GET /api/assets/{id}/content: the bytes, under /api/view's caching and Range rules. Types
     * a browser would run as a document (HTML, SVG, XML, script) are always an attachment of
     * type application/octet-stream, whatever `disposition` asks.
     */
    async content(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req, res);
      const stat = await store.stat(ref.hash);
      if (!stat) throw new UploadFailure("not_found", `the content of asset ${ref.id} is no longer stored`);
      const dangerous = isDangerousType(ref.mimeType);
      const disposition = req.query.disposition === "inline" && !dangerous ? "inline" : "attachment";
      await refs.touch(ref.id, ref.owner);
      await sendBlob(req, res, deps, {
        hash: ref.hash,
        size: stat.size,
        mime: dangerous ? "application/octet-stream" : bareMime(ref.mimeType),
        disposition: `${disposition}; filename*=UTF-8''${encodeURIComponent(ref.name.replace(/[\r\n]/g, ""))}`,
        label: `blake3:${ref.hash}`,
      });
    },

    /** PUT /api/assets/{id}: name, tags, user_metadata, preview_id (null clears it). */
    async update(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req, res);
      const body = parseBody(UpdateAssetBody, req.body);
      await checkPreview(deps, ref.owner, body.preview_id);
      const updated = await withinTagLimit(() =>
        refs.update(ref.id, ref.owner, {
          ...(body.name !== undefined && { name: body.name }),
          ...(body.tags !== undefined && { tags: body.tags }),
          ...(body.user_metadata !== undefined && { userMetadata: body.user_metadata }),
          ...(body.preview_id !== undefined && { previewId: body.preview_id }),
        }),
      );
      if (!updated) throw gone(ref);
      res.json(await toAsset(updated, refs));
    },

    /** POST /api/assets/{id}/tags: refused whole (nothing added) when the record would pass MAX_TAGS_PER_ASSET. */
    async addTags(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req, res);
      const { tags } = parseBody(TagsBody, req.body);
      const result = await withinTagLimit(() => refs.addTags(ref.id, ref.owner, tags));
      if (!result) throw gone(ref);
      const answer: TagsAdded = { added: result.added, already_present: result.alreadyPresent, total_tags: result.reference.tags };
      res.json(answer);
    },

    /** DELETE /api/assets/{id}/tags. */
    async removeTags(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req, res);
      const { tags } = parseBody(TagsBody, req.body);
      const result = await refs.removeTags(ref.id, ref.owner, tags);
      if (!result) throw gone(ref);
      const answer: TagsRemoved = { removed: result.removed, not_present: result.notPresent, total_tags: result.reference.tags };
      res.json(answer);
    },

    /**
     * DELETE /api/assets/{id}: the record only. The bytes stay, as ComfyUI keeps content after
     * its last reference goes: they may be named by another owner's record (or be uploaded
     * again), and `HEAD /api/assets/hash/{hash}` still answers 200.
     */
    async remove(req: Request, res: Response): Promise<void> {
      const ref = await findRecord(req, res);
      if (!(await refs.delete(ref.id, ref.owner))) throw gone(ref);
      res.status(204).end();
    },

    /** GET /api/tags: the owner's tags with how many of the owner's records carry each. */
    async tags(req: Request, res: Response): Promise<void> {
      const query = parseTagsQuery(req, ownerOf(res));
      const { tags, total } = await refs.tagCounts(query);
      const answer: TagsList = { tags, total, has_more: query.offset + tags.length < total };
      res.json(answer);
    },

    /** GET /api/assets/tags/refine: how many of the filtered records carry each tag. */
    async refineTags(req: Request, res: Response): Promise<void> {
      const { filter, limit } = parseRefineQuery(req, ownerOf(res));
      const counts = await refs.tagHistogram(filter, limit);
      const answer: TagHistogram = { tag_counts: Object.fromEntries(counts.map((c) => [c.name, c.count])) };
      res.json(answer);
    },

    /** POST /api/assets/seed, /prune and the seed status: ComfyUI's scans of its own folders, which this service has none of. */
    async notSupported(req: Request): Promise<void> {
      throw new UploadFailure("not_supported", `${req.method} ${req.path.slice(0, 200)} scans ComfyUI's own model, input and output folders; this service has none (assets arrive by upload)`);
    },

    /** Any other method or path under /api/assets and /api/tags. */
    async noRoute(req: Request): Promise<void> {
      throw new UploadFailure("not_found", `no route ${req.method} ${req.path.slice(0, 200)}`);
    },
  };
}
