import { z } from "zod";

/** Registry resources (spec sections 2.1–2.5, 3). Every field is optional, as the spec declares none required. */

export const NodeStatus = z.enum(["NodeStatusActive", "NodeStatusDeleted", "NodeStatusBanned"]);
export const NodeVersionStatus = z.enum([
  "NodeVersionStatusActive",
  "NodeVersionStatusDeleted",
  "NodeVersionStatusBanned",
  "NodeVersionStatusPending",
  "NodeVersionStatusFlagged",
]);
export const PublisherStatus = z.enum(["PublisherStatusActive", "PublisherStatusBanned"]);

const dateTime = z.iso.datetime({ offset: true });
const strings = z.array(z.string());

export const PublisherUser = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
  })
  .partial();

export const PublisherMember = z
  .object({
    id: z.string(),
    role: z.string(),
    user: PublisherUser,
  })
  .partial();

export const Publisher = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    logo: z.string(),
    website: z.string(),
    support: z.string(),
    source_code_repo: z.string(),
    createdAt: dateTime,
    status: PublisherStatus,
    members: z.array(PublisherMember),
  })
  .partial();

export const NodeVersion = z
  .object({
    id: z.string(),
    node_id: z.string(),
    version: z.string(),
    changelog: z.string(),
    createdAt: dateTime,
    dependencies: strings,
    deprecated: z.boolean(),
    downloadUrl: z.string(),
    status: NodeVersionStatus,
    status_reason: z.string(),
    app_node_extract_status: z.string(),
    tags: strings,
    tags_admin: strings,
    supported_accelerators: strings,
    supported_app_frontend_version: z.string(),
    supported_app_version: z.string(),
    supported_os: strings,
    /** Public registry name of app_node_extract_status, carried beside it. */
    comfy_node_extract_status: z.string(),
  })
  .partial();

export const Node = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    author: z.string(),
    category: z.string(),
    tags: strings,
    tags_admin: strings,
    created_at: dateTime,
    downloads: z.number().int(),
    repo_stars: z.number().int(),
    rating: z.number(),
    search_ranking: z.number().int(),
    banner_url: z.string(),
    icon: z.string(),
    repository: z.string(),
    license: z.string(),
    status: NodeStatus,
    status_detail: z.string(),
    latest_version: NodeVersion,
    publisher: Publisher,
    preempted_app_node_names: strings,
    supported_accelerators: strings,
    supported_app_frontend_version: z.string(),
    supported_app_version: z.string(),
    supported_os: strings,
    translations: z.record(z.string(), z.record(z.string(), z.unknown())),
    /** Public registry names of renamed fields, carried beside ours where the catalog has them. */
    github_stars: z.number().int(),
    preempted_comfy_node_names: strings,
    supported_comfyui_version: z.string(),
    supported_comfyui_frontend_version: z.string(),
  })
  .partial();

/** Our field name → the public registry's name for it: both load, both are answered. */
export const NODE_PUBLIC_ALIASES = {
  repo_stars: "github_stars",
  preempted_app_node_names: "preempted_comfy_node_names",
  supported_app_version: "supported_comfyui_version",
  supported_app_frontend_version: "supported_comfyui_frontend_version",
} as const;
export const NODE_VERSION_PUBLIC_ALIASES = {
  app_node_extract_status: "comfy_node_extract_status",
} as const;

/** The keys a Node in a response may carry: nothing else leaves the service. */
export const NODE_FIELDS = Object.keys(Node.shape) as (keyof z.infer<typeof Node>)[];

/**
 * A catalog record as ingested: a Node plus `app_node_names`, the application node class
 * names the pack provides. Only `id` is required; nulls are tolerated and dropped on load.
 */
export const CatalogRecord = Node.extend({
  id: z.string().min(1),
  app_node_names: strings.optional(),
  /**
   * Every version of the pack the catalog knows, newest `createdAt` first. A mirror
   * fills it from the registry's version routes; a file catalog may carry it or not.
   */
  versions: z.array(NodeVersion).optional(),
  /** The version whose classes `app_node_names` holds (the install-path version), when known. */
  app_node_names_version: z.string().optional(),
  /** Those classes with their whole definitions (ComfyNode), when the source gave them (a mirror does). */
  app_nodes: z.array(z.lazy(() => ComfyNode)).optional(),
});

export const SearchPage = z.object({
  nodes: z.array(Node),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});

/**
 * A node class of one version with its whole definition, as the public registry answers
 * `GET /nodes/{nodeId}/versions/{version}/comfy-nodes` (the production OpenAPI's ComfyNode):
 * `input_types`, `return_types` and `return_names` are JSON text, as the registry stores them.
 * A catalog that holds a class's name only answers `comfy_node_name` alone.
 */
export const ComfyNode = z
  .object({
    comfy_node_name: z.string(),
    category: z.string(),
    description: z.string(),
    input_types: z.string(),
    deprecated: z.boolean(),
    experimental: z.boolean(),
    output_is_list: z.array(z.boolean()),
    return_names: z.string(),
    return_types: z.string(),
    function: z.string(),
    policy: z.string(),
  })
  .partial();
export const ComfyNodesPage = z.object({
  comfy_nodes: z.array(ComfyNode),
  totalNumberOfPages: z.number().int(),
});

/** Registry error body (spec section 7): both fields required. */
export const ErrorResponse = z.object({
  error: z.string(),
  message: z.string(),
});

export type NodeStatus = z.infer<typeof NodeStatus>;
export type PublisherUser = z.infer<typeof PublisherUser>;
export type PublisherMember = z.infer<typeof PublisherMember>;
export type Publisher = z.infer<typeof Publisher>;
export type NodeVersion = z.infer<typeof NodeVersion>;
export type Node = z.infer<typeof Node>;
export type CatalogRecord = z.infer<typeof CatalogRecord>;
export type SearchPage = z.infer<typeof SearchPage>;
export type ErrorResponse = z.infer<typeof ErrorResponse>;
export type ComfyNode = z.infer<typeof ComfyNode>;
export type ComfyNodesPage = z.infer<typeof ComfyNodesPage>;
