import type { IncomingMessage } from "node:http";
import type { NodeVersion } from "@app/contracts";

/** The path this service serves a version's archive at. */
export function archivePath(id: string, version: string): string {
  return `/archives/${encodeURIComponent(id)}/${encodeURIComponent(version)}/node.zip`;
}

/** A host as a URL may carry it (name or address, optional port): anything else in a header is ignored. */
const HOST_RE = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const first = (h: string | string[] | undefined): string | undefined => (Array.isArray(h) ? h[0] : h)?.split(",")[0]?.trim() || undefined;

/**
 * The address a client reached this service at: PUBLIC_URL when set, else the request's own
 * (`X-Forwarded-Proto`/`X-Forwarded-Host` from a proxy in front, first value of each, then `Host`).
 */
export function publicBase(req: IncomingMessage, configured: string | undefined): string {
  if (configured) return configured;
  const proto = first(req.headers["x-forwarded-proto"])?.toLowerCase();
  const scheme = proto === "https" || proto === "http" ? proto : (req.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
  const host = [first(req.headers["x-forwarded-host"]), first(req.headers.host)].find((h) => h !== undefined && HOST_RE.test(h));
  return `${scheme}://${host ?? "localhost"}`;
}

/**
 * How the routes answer a version's `downloadUrl`: this service's archive route (archives on),
 * or upstream's as the catalog holds it (MIRROR_ARCHIVES=off). A version upstream publishes no
 * archive for keeps its empty `downloadUrl`, which the clients read as "not installable".
 */
export interface ArchiveLinks {
  version(req: IncomingMessage, v: NodeVersion): NodeVersion;
}

export const UPSTREAM_LINKS: ArchiveLinks = { version: (_req, v) => v };

export function servedLinks(publicUrl: string | undefined): ArchiveLinks {
  return {
    version(req, v) {
      if (!v.downloadUrl || !v.version || !v.node_id) return v;
      return { ...v, downloadUrl: `${publicBase(req, publicUrl)}${archivePath(v.node_id, v.version)}` };
    },
  };
}
