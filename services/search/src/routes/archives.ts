import type { Request, Response, Router } from "express";
import type { Logger } from "@app/platform";
import type { SearchEngine } from "../ports/search-engine.ts";
import type { ArchiveEntry } from "../adapters/archives/archive-index.ts";
import type { ArchiveSink, ArchiveStore } from "../adapters/archives/archive-store.ts";
import { hostOf, UpstreamArchiveError } from "../adapters/archives/upstream-archive.ts";
import { versionNamed } from "../domain/versions.ts";
import { SearchErrorCode, sendError } from "./errors.ts";
import { findPack, quoted } from "./registry/pack.ts";

export interface ArchiveRouteDeps {
  engine: SearchEngine;
  store: ArchiveStore;
  /** MIRROR_ARCHIVES=off: only archives already stored (a bundle's) are served; nothing is fetched. */
  fetchFromUpstream: boolean;
  logger: Logger;
}

export const ArchiveErrorCode = { unavailable: "archive_unavailable" } as const;

/**
 * GET|HEAD /archives/{id}/{version}/node.zip: a pack version's archive, from the blob store, or
 * fetched from upstream's storage, stored and streamed at once (pull-through). A banned pack or
 * banned version answers 403, as the registry answers a banned pack's routes ("Node Banned"):
 * it exists, and is refused. Unknown packs and versions answer 404.
 */
export function archiveRoute(router: Router, d: ArchiveRouteDeps): void {
  router.get("/archives/:nodeId/:version/node.zip", async (req, res) => {
    const pack = await findPack(d.engine, req, res, { includeBanned: false });
    if (!pack) return;
    const asked = String(req.params.version);
    const version = versionNamed(pack, asked);
    const what = `${quoted(pack.id)} version ${quoted(asked, 100)}`;
    if (!version)
      return sendError(res, 404, SearchErrorCode.notFound, `node ${quoted(pack.id)} has no version ${quoted(asked, 100)} in this catalog`);
    if (version.status === "NodeVersionStatusBanned")
      return sendError(res, 403, SearchErrorCode.forbidden, `${what} is banned; its archive is not served`);
    const stored = await d.store.stored(pack.id, asked);
    if (stored) return serveStored(req, res, d.store, stored);
    if (!version.downloadUrl) return sendError(res, 404, SearchErrorCode.notFound, `the registry publishes no archive for ${what}`);
    if (!d.fetchFromUpstream)
      return sendError(
        res,
        404,
        SearchErrorCode.notFound,
        `the archive of ${what} is not stored here, and MIRROR_ARCHIVES=off fetches none`,
      );
    const target = { id: pack.id, version: asked, upstreamUrl: version.downloadUrl };
    try {
      if (req.method === "HEAD") return serveStored(req, res, d.store, await d.store.ensure(target));
      await d.store.ingest(target, clientSink(res, pack.id, asked));
    } catch (err) {
      if (res.headersSent) {
        // Upstream broke off after the first bytes went out: the client sees a short body, nothing was stored.
        d.logger.warn({ id: pack.id, version: asked, err: (err as Error).message }, "archive pull-through broke off; nothing stored");
        res.destroy();
        return;
      }
      if (!(err instanceof UpstreamArchiveError)) throw err;
      if (err.status === 404 || err.status === 403)
        return sendError(
          res,
          404,
          SearchErrorCode.notFound,
          `the archive of ${what} is not stored here, and upstream's storage (${hostOf(target.upstreamUrl)}) has none: ${err.message}`,
        );
      sendError(
        res,
        503,
        ArchiveErrorCode.unavailable,
        `the archive of ${what} is not stored here yet, and upstream cannot give it now (${err.message}); try again later`,
      );
    }
  });
}

const headersOf = (id: string, version: string): Record<string, string> => ({
  "content-type": "application/zip",
  "content-disposition": `attachment; filename="${`${id}-${version}`.replace(/[^A-Za-z0-9._-]/g, "_")}.zip"`,
  "cache-control": "public, max-age=86400",
});

/** The client's side of a pull-through: the headers once upstream answered, then each chunk, waiting on drain. */
function clientSink(res: Response, id: string, version: string): ArchiveSink {
  return {
    start(size) {
      res.writeHead(200, { ...headersOf(id, version), ...(size !== undefined && { "content-length": String(size) }) });
    },
    write(chunk) {
      // A client that went away does not stop the archive from being stored.
      if (res.destroyed || res.writableEnded) return;
      if (res.write(chunk)) return;
      return new Promise<void>((resolve) => {
        const go = () => {
          res.off("drain", go);
          res.off("close", go);
          resolve();
        };
        res.on("drain", go);
        res.on("close", go);
      });
    },
    end(last) {
      if (!res.destroyed) res.end(last);
    },
  };
}

/** A stored archive: ETag (its blake3), Repr-Digest (SHA-256 recorded at ingest), one byte range, 304. */
async function serveStored(req: Request, res: Response, store: ArchiveStore, entry: ArchiveEntry): Promise<void> {
  const etag = `"${entry.blake3}"`;
  res.set({ ...headersOf(entry.id, entry.version), etag, "accept-ranges": "bytes", "repr-digest": `sha-256=:${entry.sha256}:` });
  if (req.fresh || (req.headers["if-none-match"] ?? "").split(",").some((t) => t.trim() === etag)) {
    res.status(304).end();
    return;
  }
  const ranges = req.headers.range ? req.range(entry.size, { combine: true }) : undefined;
  if (ranges === -1) {
    res.status(416).set("content-range", `bytes */${entry.size}`).end();
    return;
  }
  // One range is answered as asked; several (or a malformed header) as the whole archive, which HTTP allows.
  const range = Array.isArray(ranges) && ranges.length === 1 && ranges.type === "bytes" ? ranges[0]! : undefined;
  const length = range ? range.end - range.start + 1 : entry.size;
  res.status(range ? 206 : 200).set("content-length", String(length));
  if (range) res.set("content-range", `bytes ${range.start}-${range.end}/${entry.size}`);
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  const body = await store.read(entry, range);
  body.on("error", () => res.destroy());
  res.on("close", () => body.destroy());
  body.pipe(res);
}
