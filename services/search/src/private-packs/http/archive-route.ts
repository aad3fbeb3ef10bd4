import type { Router } from "express";
import type { BlobStore } from "@app/blobs";
import type { PrivatePackRepository } from "../store/private-pack-repository.ts";
import { param } from "./publisher-routes.ts";

/**
 * `GET /archives/{id}/{version}/node.zip` of a private pack: its stored archive, with the
 * headers the mirror's archives carry (ETag its blake3, Repr-Digest its SHA-256). Any other id
 * or version goes on to the mirror's archive route.
 */
export function privateArchiveRoute(router: Router, repo: PrivatePackRepository, blobs: Pick<BlobStore, "read">): void {
  router.get("/archives/:nodeId/:version/node.zip", async (req, res, next) => {
    const v = await repo.version(param(req.params.nodeId), param(req.params.version));
    if (!v) return next();
    const sha256 = typeof v.fields.archive_sha256 === "string" ? v.fields.archive_sha256 : undefined;
    const etag = `"${v.archiveHash}"`;
    res.set({
      "content-type": "application/zip",
      "content-disposition": `attachment; filename="${v.nodeId}-${v.version}.zip"`.replace(/[^\x20-\x7e]/g, "_"),
      etag,
      "cache-control": "public, max-age=31536000, immutable",
      ...(sha256 && { "repr-digest": `sha-256=:${sha256}:` }),
    });
    if (req.headers["if-none-match"] === etag) return void res.status(304).end();
    res.set("content-length", String(v.archiveSize));
    if (req.method === "HEAD") return void res.end();
    const body = await blobs.read(v.archiveHash);
    body.on("error", (err) => res.destroy(err));
    body.pipe(res);
  });
}
