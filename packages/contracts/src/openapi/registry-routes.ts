import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  AllVersionsQueryWire,
  BulkNodeVersionsRequest,
  ComfyNodesQueryWire,
  InstallQueryWire,
  NodeVersionsQueryWire,
} from "../registry-reads.ts";
import { SEARCH_TEXT_MAX, SearchQueryWire } from "../search-query.ts";
import { binary, errorsOf, json, jsonArray, type SchemaName } from "./components.ts";
import { describedQuery, nodeId, version } from "./parameters.ts";

const registryErrors = errorsOf("ErrorResponse", {
  "400": "Invalid input; the message names the parameter and why.",
  "500": "Internal server error.",
});
const redirect = {
  "302": {
    description: "The id differs from a node's only by case: `Location` is the same URL with the node's id.",
    headers: { Location: { schema: { type: "string" as const } } },
  },
};
const banned = (description = 'The node is banned (`message`: "Node Banned").') => ({ "403": json("ErrorResponse", description) });
const notFound = (description: string) => ({ "404": json("ErrorResponse", description) });
const includeBanned = z.object({ include_banned: z.boolean() }).partial();

const searchQuery = describedQuery(SearchQueryWire.extend({ comfy_node_search: z.string().max(SEARCH_TEXT_MAX).optional() }), {
  search:
    "Keywords: tokenised, accent- and case-insensitive, typo-tolerant, the last token matches as a prefix; results ranked by relevance, then popularity.",
  repository_url_search: "A repository URL, `owner/repo` or a fragment; scheme, `www.`, case, trailing `/` and `.git` are ignored.",
  app_node_search: "An application node class name; whole-name matches rank above partial ones.",
  supported_os: "A ` :: `-separated path (e.g. `Windows`, `Microsoft :: Windows`, `POSIX :: Linux`).",
  supported_accelerator: "A ` :: `-separated path (e.g. `CUDA`, `GPU :: NVIDIA CUDA`, `ROCm`, `Metal`, `DirectML`, `CPU`).",
  include_banned: "Include banned nodes (deleted nodes are never returned).",
  node_id:
    "Only these packs (repeat the parameter: `node_id=a&node_id=b`), under every other parameter. At most 500. Without `limit`, the page holds as many as were asked.",
  latest: "Accepted for the registry's clients; this service has no list cache to bypass.",
  comfyui_version: "Accepted (ComfyUI-Manager sends it on every list page); every pack is answered either way.",
  form_factor: "Accepted (ComfyUI-Manager sends it on every list page); every pack is answered either way.",
  comfy_node_search: "The public registry's name for `app_node_search`.",
});

function registerSearch(registry: OpenAPIRegistry, path: string, operationId: string, summary: string): void {
  registry.registerPath({
    method: "get",
    path,
    operationId,
    tags: ["Registry"],
    summary,
    description:
      "The registry's `sort` and `timestamp` are refused with 400 (`invalid_parameter`): the order here is relevance, then popularity, then id, and the catalog keeps no per-pack update times.",
    request: { query: searchQuery },
    responses: { "200": json("SearchPage", "A page of nodes."), ...registryErrors },
  });
}

/** The read routes of a node: the node, its versions, their classes and the install answer. */
function registerNodeRoutes(registry: OpenAPIRegistry): void {
  const get = (
    path: string,
    operationId: string,
    rest: { summary?: string; params: z.ZodObject; query?: z.ZodObject; responses: RouteConfig["responses"] },
  ) =>
    registry.registerPath({
      method: "get",
      path,
      operationId,
      tags: ["Registry"],
      summary: rest.summary,
      request: { params: rest.params, query: rest.query },
      responses: { ...rest.responses, ...registryErrors },
    });
  get("/nodes/{nodeId}", "GetNode", {
    params: z.object({ nodeId: z.string() }),
    query: includeBanned,
    responses: {
      "200": json("Node", "The node, with `latest_version` the install-path version (none when no version is active, flagged or pending)."),
      ...redirect,
      ...banned('The node is banned (without include_banned=true): `message` is "Node Banned", as the registry answers.'),
      ...notFound("Unknown or deleted node."),
    },
  });
  get("/nodes/{nodeId}/versions/{version}/comfy-nodes", "ListComfyNodes", {
    summary:
      "The node classes of a version with their whole definitions, paged (the install path's mirrored; another version's read through from the registry and kept)",
    params: z.object({
      nodeId: nodeId(),
      version: version("The version the catalog holds the classes of (the install-path version unless the catalog says), or `latest`."),
    }),
    query: ComfyNodesQueryWire,
    responses: {
      "200": json("ComfyNodesPage", "A page of node classes."),
      ...redirect,
      ...banned("The node is banned (without include_banned=true)."),
      ...notFound("Unknown node or version, or a version the registry holds no classes for."),
      "503": json("ErrorResponse", "Another version's classes, not yet kept here, and the registry cannot be reached."),
    },
  });
  get("/nodes/{nodeId}/install", "InstallNode", {
    summary: "The version to install: the install-path version, or the one asked (whatever its status)",
    params: z.object({ nodeId: nodeId() }),
    query: InstallQueryWire,
    responses: {
      "200": json("NodeVersion", "The version, with its `downloadUrl`."),
      ...redirect,
      ...banned(),
      ...notFound("Unknown or deleted node, or no such version (or none installable) in the catalog."),
    },
  });
  get("/nodes/{nodeId}/versions", "ListNodeVersions", {
    summary: "Every version the catalog knows of a node, newest first",
    params: z.object({ nodeId: nodeId() }),
    query: describedQuery(NodeVersionsQueryWire, {
      statuses: "Repeatable (`statuses=A&statuses=B`); absent = every status.",
      include_status_reason: "Answer `status_reason` too.",
    }),
    responses: { "200": jsonArray("NodeVersion", "The versions."), ...redirect, ...banned(), ...notFound("Unknown or deleted node.") },
  });
  get("/nodes/{nodeId}/versions/{version}", "GetNodeVersion", {
    params: z.object({
      nodeId: nodeId(),
      version: version("The version's number (not a UUID), or `latest` for the install-path version."),
    }),
    responses: { "200": json("NodeVersion", "The version."), ...redirect, ...banned(), ...notFound("Unknown node or version.") },
  });
}

function registerArchive(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/archives/{nodeId}/{version}/node.zip",
    operationId: "GetNodeArchive",
    tags: ["Registry"],
    summary:
      "A version's archive (what every answered version's `downloadUrl` names unless MIRROR_ARCHIVES=off): from the store, or fetched from upstream's storage, stored and streamed at once",
    description:
      "HEAD answers the same headers. A stored archive carries `ETag` (its blake3), `Repr-Digest: sha-256=:<base64>:` of the whole archive (recorded when it was stored), `Accept-Ranges: bytes`; one byte range answers 206, an unsatisfiable one 416; `If-None-Match` 304.",
    request: { params: z.object({ nodeId: nodeId(), version: version("The version's number.") }) },
    responses: {
      "200": { description: "The zip archive.", content: { "application/zip": { schema: binary("application/zip") } } },
      "206": { description: "One byte range of the archive." },
      ...redirect,
      "304": { description: "Not modified (If-None-Match)." },
      "403": json("ErrorResponse", "The node or this version is banned: its archive is never served."),
      ...notFound("Unknown node or version; or upstream publishes no archive for it; or it is not stored and MIRROR_ARCHIVES=off."),
      "416": { description: "The range lies outside the archive." },
      "503": json(
        "ErrorResponse",
        "Not stored yet, and upstream's storage cannot be reached or did not answer within ARCHIVE_TIMEOUT_MS (`error: archive_unavailable`, the message names the version).",
      ),
      ...registryErrors,
    },
  });
}

/** Reads across packs: every version, many versions at once, a class's pack, publishers. */
function registerCatalogRoutes(registry: OpenAPIRegistry): void {
  const route = (
    method: "get" | "post",
    path: string,
    operationId: string,
    rest: { summary?: string; request?: RouteConfig["request"]; responses: RouteConfig["responses"] },
  ) =>
    registry.registerPath({
      method,
      path,
      operationId,
      tags: ["Registry"],
      summary: rest.summary,
      request: rest.request,
      responses: { ...rest.responses, ...registryErrors },
    });
  route("get", "/versions", "ListAllNodeVersions", {
    summary: "Every version of every pack not banned, newest first, paged",
    request: {
      query: describedQuery(AllVersionsQueryWire, {
        statuses: "Repeatable; absent = every status.",
        status_reason: "A case-insensitive substring of `status_reason`.",
      }),
    },
    responses: { "200": json("VersionsPage", "A page of versions."), "403": json("ErrorResponse", "`nodeId` names a banned node.") },
  });
  route("post", "/bulk/nodes/versions", "GetBulkNodeVersions", {
    summary: "Many node versions at once, each `success` or `not_found`, in the order asked",
    request: { body: { required: true, content: { "application/json": { schema: BulkNodeVersionsRequest } } } },
    responses: {
      "200": json("BulkNodeVersionsResponse", "One result per identifier."),
      "413": json("ErrorResponse", "A body over 256 KiB."),
    },
  });
  route("get", "/comfy-nodes/{comfyNodeName}/node", "GetNodeByComfyNodeName", {
    summary: "The pack that provides a node class: one that preempts the name first, then the lower search_ranking, then more downloads",
    request: { params: z.object({ comfyNodeName: z.string() }) },
    responses: { "200": json("Node", "The pack."), ...notFound("No pack provides that class.") },
  });
  route("get", "/publishers/{publisherId}", "GetPublisher", {
    summary: "A publisher, as its packs embed it",
    request: { params: z.object({ publisherId: z.string() }) },
    responses: { "200": json("Publisher", "The publisher."), ...notFound("No pack of this publisher in the catalog.") },
  });
  route("get", "/publishers/{publisherId}/nodes", "ListNodesForPublisher", {
    request: { params: z.object({ publisherId: z.string() }), query: includeBanned },
    responses: { "200": jsonArray("Node", "The publisher's packs, most popular first (empty for an unknown publisher).") },
  });
}

/** ComfyUI-Manager's channel files (set its channel URL to `<base>/channel`). */
function registerChannel(registry: OpenAPIRegistry): void {
  const file = (name: string, operationId: string, schema: SchemaName, summary: string) =>
    registry.registerPath({
      method: "get",
      path: `/channel/${name}.json`,
      operationId,
      tags: ["Channel"],
      summary,
      responses: { "200": json(schema, summary) },
    });
  file(
    "custom-node-list",
    "ChannelCustomNodeList",
    "CustomNodeList",
    "Every pack not banned, as a git-clone entry of ComfyUI-Manager's list",
  );
  file(
    "extension-node-map",
    "ChannelExtensionNodeMap",
    "ExtensionNodeMap",
    "Repository URL → [the pack's node classes, {title_aux, preemptions}]: Manager's missing-node mapping",
  );
  file(
    "github-stats",
    "ChannelGithubStats",
    "GithubStats",
    "Repository URL → {stars, last_update, author_account_age_days} for every pack not banned",
  );
  file("model-list", "ChannelModelList", "ModelList", "No models: `{models: []}`");
  file("alter-list", "ChannelAlterList", "AlterList", "No alternatives: `{items: []}`");
  file("extras", "ChannelExtras", "ChannelExtras", "No favourites: `{favorites: []}`");
}

/** The registry's read routes, as the public registry's clients call them. */
export function registerRegistryRoutes(registry: OpenAPIRegistry): void {
  registerSearch(registry, "/nodes/search", "SearchNodes", "Search nodes across all publishers");
  registerSearch(registry, "/nodes", "ListAllNodes", "List nodes (same parameters and answers as /nodes/search)");
  registerNodeRoutes(registry);
  registerArchive(registry);
  registerCatalogRoutes(registry);
  registerChannel(registry);
}
