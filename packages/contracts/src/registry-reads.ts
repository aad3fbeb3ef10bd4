import { z } from "zod";
import { Node, NodeVersion, NodeVersionStatus } from "./registry.ts";
import { bool, positiveInt, single, SEARCH_TEXT_MAX } from "./search-query.ts";

/**
 * The registry's per-pack and version read routes: their query parameters,
 * bodies and answers, in the production OpenAPI's shapes (comfy-cli's bundled copy).
 */

/** `version` of `/nodes/{id}/install`: the production document's pattern. */
export const INSTALL_VERSION_PATTERN = /^\d+\.\d+\.\d+$/;

export const InstallQuery = z.object({
  version: single("version").transform((v, ctx) => {
    if (v === undefined) return undefined;
    if (!INSTALL_VERSION_PATTERN.test(v)) {
      ctx.addIssue({
        code: "custom",
        message: `version must be MAJOR.MINOR.PATCH digits (e.g. 1.2.3), got ${JSON.stringify(v.slice(0, 40))}`,
      });
      return z.NEVER;
    }
    return v;
  }),
});

/** `statuses` (repeatable, `statuses=A&statuses=B`): each a NodeVersionStatus. Absent = every status. */
const statuses = z
  .unknown()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined;
    const list = typeof v === "string" ? [v] : Array.isArray(v) && v.every((x) => typeof x === "string") ? v : undefined;
    const bad = list?.find((s) => !NodeVersionStatus.safeParse(s).success);
    if (!list || bad !== undefined) {
      const got = bad !== undefined ? `, got ${JSON.stringify(bad.slice(0, 40))}` : "";
      ctx.addIssue({ code: "custom", message: `statuses must be repeated values among ${NodeVersionStatus.options.join(", ")}${got}` });
      return z.NEVER;
    }
    return new Set(list as VersionStatus[]);
  });

export const NodeVersionsQuery = z.object({
  statuses,
  include_status_reason: bool("include_status_reason"),
});

export const VERSIONS_PAGE_SIZE_MAX = 100;

export const AllVersionsQuery = z.object({
  nodeId: single("nodeId"),
  statuses,
  include_status_reason: bool("include_status_reason"),
  page: positiveInt("page", 1, undefined, 1),
  pageSize: positiveInt("pageSize", 1, VERSIONS_PAGE_SIZE_MAX, 10),
  status_reason: single("status_reason").transform((v, ctx) => {
    if (v !== undefined && v.length > SEARCH_TEXT_MAX) {
      ctx.addIssue({ code: "custom", message: `status_reason must be at most ${SEARCH_TEXT_MAX} characters, got ${v.length}` });
      return z.NEVER;
    }
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  }),
});

/** No upper bound on `limit`: the ComfyUI frontend asks for 256 and 8192 classes a page. */
export const ComfyNodesQuery = z.object({
  page: positiveInt("page", 1, undefined, 1),
  limit: positiveInt("limit", 1, undefined, 10),
  include_banned: bool("include_banned"),
});

export const PublisherNodesQuery = z.object({ include_banned: bool("include_banned") });

export const VersionsPage = z.object({
  total: z.number().int(),
  versions: z.array(NodeVersion),
  page: z.number().int(),
  pageSize: z.number().int(),
  totalPages: z.number().int(),
});

export const NodeVersionList = z.array(NodeVersion);
export const NodeList = z.array(Node);

export const BULK_VERSIONS_MAX = 1000;

export const NodeVersionIdentifier = z.object({
  node_id: z.string().min(1).max(SEARCH_TEXT_MAX),
  version: z.string().min(1).max(SEARCH_TEXT_MAX),
});

export const BulkNodeVersionsRequest = z.object({
  node_versions: z.array(NodeVersionIdentifier).max(BULK_VERSIONS_MAX),
});

export const BulkNodeVersionResult = z.object({
  identifier: NodeVersionIdentifier,
  status: z.enum(["success", "not_found", "error"]),
  node_version: NodeVersion.optional(),
  error_message: z.string().optional(),
});

export const BulkNodeVersionsResponse = z.object({ node_versions: z.array(BulkNodeVersionResult) });

/** A NodeVersionStatus value (registry.ts exports the schema only). */
export type VersionStatus = z.infer<typeof NodeVersionStatus>;
export type NodeVersionIdentifier = z.infer<typeof NodeVersionIdentifier>;
export type BulkNodeVersionResult = z.infer<typeof BulkNodeVersionResult>;
export type BulkNodeVersionsResponse = z.infer<typeof BulkNodeVersionsResponse>;
export type VersionsPage = z.infer<typeof VersionsPage>;

/** The OpenAPI-facing shapes of the same parameters (the parsers above take raw query values). */
const statusList = z.array(NodeVersionStatus);
export const InstallQueryWire = z.object({ version: z.string().regex(INSTALL_VERSION_PATTERN) }).partial();
export const NodeVersionsQueryWire = z.object({ statuses: statusList, include_status_reason: z.boolean().default(false) }).partial();
export const AllVersionsQueryWire = z
  .object({
    nodeId: z.string(),
    statuses: statusList,
    include_status_reason: z.boolean().default(false),
    page: z.number().int().min(1).default(1),
    pageSize: z.number().int().min(1).max(VERSIONS_PAGE_SIZE_MAX).default(10),
    status_reason: z.string().max(SEARCH_TEXT_MAX),
  })
  .partial();
export const ComfyNodesQueryWire = z
  .object({ page: z.number().int().min(1).default(1), limit: z.number().int().min(1).default(10), include_banned: z.boolean() })
  .partial();
