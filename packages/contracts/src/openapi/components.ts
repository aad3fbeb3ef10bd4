import { z } from "zod";
import { Asset, AssetCreated, AssetError, AssetsList, TagHistogram, TagsAdded, TagsList, TagsRemoved } from "../assets.ts";
import { AlterList, ChannelExtras, CustomNodeList, ExtensionNodeMap, GithubStats, ModelList } from "../channel.ts";
import { BulkNodeVersionsResponse, VersionsPage } from "../registry-reads.ts";
import { ComfyNodesPage, ErrorResponse, Node, NodeVersion, Publisher, SearchPage } from "../registry.ts";
import { MaskUploadResult, UploadError, UploadResult } from "../upload.ts";

/** The answers' schemas, each a component the operations refer to by name. */
const NAMED = {
  Node,
  NodeVersion,
  Publisher,
  SearchPage,
  ComfyNodesPage,
  VersionsPage,
  BulkNodeVersionsResponse,
  CustomNodeList,
  ExtensionNodeMap,
  GithubStats,
  ModelList,
  AlterList,
  ChannelExtras,
  ErrorResponse,
  UploadResult,
  MaskUploadResult,
  UploadError,
  Asset,
  AssetCreated,
  AssetsList,
  TagsList,
  TagsAdded,
  TagsRemoved,
  TagHistogram,
  AssetError,
} as const;

export type SchemaName = keyof typeof NAMED;

/**
 * The components' JSON Schemas, made by zod itself from the output side of each schema (what
 * the services answer, which the response tests validate real answers against).
 */
export function componentSchemas(): Record<string, Record<string, unknown>> {
  const components = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(NAMED)) components.add(schema, { id });
  const { schemas } = z.toJSONSchema(components, { target: "draft-2020-12", io: "output", uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Record<string, unknown>>;
  };
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return schemas;
}

const ref = (id: SchemaName) => ({ $ref: `#/components/schemas/${id}` });

/** A JSON answer of the named component. */
export const json = (id: SchemaName, description: string) => ({ description, content: { "application/json": { schema: ref(id) } } });

/** A JSON answer of an array of the named component. */
export const jsonArray = (id: SchemaName, description: string) => ({
  description,
  content: { "application/json": { schema: { type: "array" as const, items: ref(id) } } },
});

/** Answers of one schema, by status. */
export const errorsOf = (id: SchemaName, statuses: Record<string, string>) =>
  Object.fromEntries(Object.entries(statuses).map(([status, description]) => [status, json(id, description)]));

/** Bytes of any type, as a schema of a body or an answer. */
export const binary = (contentMediaType = "application/octet-stream") => ({ type: "string" as const, contentMediaType });

export const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];

export const securitySchemes = {
  apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
  bearer: { type: "http", scheme: "bearer" },
} as const;

const retryAfter = {
  "Retry-After": { description: "Seconds until the key's window ends.", schema: { type: "integer" as const, minimum: 1 } },
};

/** Every keyed route can answer this: the key's per-minute allowance is spent. */
export const rateLimited = {
  "429": {
    ...json(
      "UploadError",
      "The key's limit for this minute is reached (`rate_limited`): requests per minute, or upload bytes per minute on upload routes.",
    ),
    headers: retryAfter,
  },
};

/** The asset routes' 429, in ComfyUI's envelope. */
export const assetRateLimited = {
  "429": { ...json("AssetError", "The key's limit for this minute is reached (`RATE_LIMITED`)."), headers: retryAfter },
};

/** A 429 without a body (HEAD). */
export const bareRateLimited = { "429": { description: "The key's requests per minute are spent.", headers: retryAfter } };
