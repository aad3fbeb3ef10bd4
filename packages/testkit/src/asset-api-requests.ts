import fc from "fast-check";
import { multipart } from "./raw-http.ts";

/**
 * Hostile requests to the asset API, for the corpora that send them (in process through
 * supertest, and end to end through the gateway): every route, with and without the `/api`
 * prefix, with JSON bodies and query strings built from the values a corpus brings. The
 * generator only builds `{ method, path, body }`; each corpus sends it its own way and keeps
 * its own assertions.
 */
export const ASSET_API_ROUTES = [
  "POST /assets/from-hash",
  "GET /assets",
  "GET /tags",
  "GET /assets/:id",
  "GET /assets/:id/content",
  "PUT /assets/:id",
  "POST /assets/:id/tags",
  "DELETE /assets/:id/tags",
  "HEAD /assets/hash/:h",
  "GET /assets/tags/refine",
] as const;
export type AssetApiRoute = (typeof ASSET_API_ROUTES)[number];

export interface AssetApiRequest {
  route: AssetApiRoute;
  method: "GET" | "HEAD" | "POST" | "PUT" | "DELETE";
  /** Prefix, route and (on a GET) `?` and the query string, ready to send as is. */
  path: string;
  /** The JSON body's text (not always JSON) on POST, PUT and DELETE; none on GET and HEAD. */
  body?: string;
}

/** The values a corpus builds its requests from. */
export interface AssetApiValues {
  /** What stands for `:id`, as sent in the path (already percent-encoded as the corpus wants). */
  id: fc.Arbitrary<string>;
  /** What stands for `:h` in HEAD /assets/hash/:h, as sent in the path. */
  hashRef: fc.Arbitrary<string>;
  /** A stored blob's hash (`blake3:<hex>`): the one `hash` a body can carry that is valid. */
  storedHash: string;
  /** Text for the parts of a body. */
  text: {
    /** A body's `hash`, besides the stored one and anything at all. */
    hash: fc.Arbitrary<string>;
    /** Entries of a long `tags` list, besides integers and null. */
    tags: fc.Arbitrary<string>[];
    /** A body's `name`. */
    name: fc.Arbitrary<string>[];
    /** Entries of the short `tags` list sent beside a name. */
    nameTags: fc.Arbitrary<string>;
    /** Whole bodies besides `fc.json` and binary strings (text that is not JSON). */
    raw?: fc.Arbitrary<string>[];
  };
  /** The query string: up to five `key=value` pairs, each value percent-encoded by `encode`. */
  query: {
    keys: readonly string[];
    values: fc.Arbitrary<string>[];
    encode: (value: string) => string;
  };
}

/** A JSON body's text of every wrong kind (and now and then a valid one). */
export function assetApiBodies(v: Pick<AssetApiValues, "storedHash" | "text">): fc.Arbitrary<string> {
  const t = v.text;
  return fc.oneof(
    fc.json({ maxDepth: 3 }),
    fc.string({ unit: "binary", maxLength: 80 }),
    ...(t.raw ?? []),
    fc
      .record({
        hash: fc.oneof(t.hash, fc.constant(v.storedHash), fc.anything()),
        name: fc.anything(),
        tags: fc.anything(),
        user_metadata: fc.anything(),
      })
      .map((o) => JSON.stringify(o)),
    fc
      .record({ tags: fc.oneof(fc.array(fc.oneof(...t.tags, fc.integer(), fc.constant(null)), { maxLength: 70 }), fc.anything()) })
      .map((o) => JSON.stringify(o)),
    fc
      .record({ name: fc.oneof(...t.name), tags: fc.array(t.nameTags, { maxLength: 3 }) }, { requiredKeys: [] })
      .map((o) => JSON.stringify(o)),
  );
}

/** A query string (without the `?`) of up to five pairs. */
export function assetApiQueries(q: AssetApiValues["query"]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(...q.keys), fc.oneof(...q.values)), { maxLength: 5 })
    .map((pairs) => pairs.map(([k, val]) => `${k}=${q.encode(val)}`).join("&"));
}

/** One request to one of the routes, under `/api` or not. */
export function assetApiRequests(v: AssetApiValues): fc.Arbitrary<AssetApiRequest> {
  return fc
    .tuple(fc.constantFrom(...ASSET_API_ROUTES), fc.constantFrom("/api", ""), v.id, v.hashRef, assetApiBodies(v), assetApiQueries(v.query))
    .map(([route, prefix, id, hashRef, body, query]) => {
      const [method, template] = route.split(" ") as [AssetApiRequest["method"], string];
      const path = prefix + template.replace(/:id|:h/, (m) => (m === ":id" ? id : hashRef)) + (method === "GET" ? `?${query}` : "");
      return method === "GET" || method === "HEAD" ? { route, method, path } : { route, method, path, body };
    });
}

/** Query keys of the list and refine routes (a corpus adds its own odd ones). */
export const ASSET_QUERY_KEYS = [
  "include_tags",
  "exclude_tags",
  "tags_all",
  "tags_any",
  "tags_none",
  "metadata_filter",
  "name_contains",
  "limit",
  "offset",
  "after",
  "sort",
  "order",
  "prefix",
  "include_zero",
] as const;

/**
 * A request with a known answer: the hostile inputs on the asset routes
 * (each once got a 500 or slipped a limit) and POST /api/assets' refusals. `status` and `code`
 * (ComfyUI's envelope, `error.code`) are what must come back; `keeps` is text the answer must
 * hold (data kept whole). Steps run in order: the tag-limit case needs the ones before it.
 */
export interface AssetApiFixedCase {
  name: string;
  method: "GET" | "POST" | "PUT";
  path: string;
  body?: Buffer;
  contentType?: string;
  status: number;
  code?: string;
  keeps?: string;
}

/** `{"a":{"a":…1…}}`, `depth` objects deep, as JSON text (no JavaScript value is ever built that deep). */
export const deepJson = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const csv = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(",");
const json = (text: string) => ({ body: Buffer.from(text), contentType: "application/json" });

/** The fixed cases against the record `id` (whose bytes are `storedHash`, `blake3:<hex>`); the record must hold at most one tag before them. */
export function assetApiFixedCases(v: { id: string; storedHash: string }): AssetApiFixedCase[] {
  const limitTags = (n: number, prefix: string) => JSON.stringify({ tags: csv(n, prefix).split(",") });
  const upload = (fields: [string, string][], file = Buffer.from(`hostile ${v.id}`)) => {
    const m = multipart([
      ...fields.map(([name, body]) => ({ name, body })),
      { name: "file", filename: "x.bin", contentType: "application/octet-stream", body: file },
    ]);
    return { body: m.body, contentType: m.contentType };
  };
  return [
    // (a) a tag filter's size is bounded before it reaches SQL (934 tags once built an expression too deep for SQLite: a 500).
    {
      name: "(a) 934 include_tags",
      method: "GET",
      path: `/api/assets?include_tags=${csv(934, "t")}`,
      status: 400,
      code: "INVALID_TAG_FILTER",
    },
    { name: "(a) 101 tags_all", method: "GET", path: `/api/assets?tags_all=${csv(101, "t")}`, status: 400, code: "INVALID_TAG_FILTER" },
    { name: "(a) 101 tags_any", method: "GET", path: `/assets?tags_any=${csv(101, "t")}`, status: 400, code: "INVALID_TAG_FILTER" },
    {
      name: "(a) 2000 tags_none on refine",
      method: "GET",
      path: `/api/assets/tags/refine?tags_none=${csv(2000, "t")}`,
      status: 400,
      code: "INVALID_TAG_FILTER",
    },
    {
      name: "(a) 100 tags in each filter: the limit itself (ComfyUI's cap)",
      method: "GET",
      path: `/api/assets?tags_all=${csv(100, "a")}&tags_any=${csv(100, "b")}&tags_none=${csv(100, "c")}`,
      status: 200,
    },
    // (b) nesting is bounded when the body is read (5,000 levels once overflowed the stack when stored: a 500).
    {
      name: "(b) PUT user_metadata 5000 levels deep",
      method: "PUT",
      path: `/api/assets/${v.id}`,
      ...json(`{"user_metadata":${deepJson(5000)}}`),
      status: 400,
      code: "INVALID_BODY",
    },
    {
      name: "(b) from-hash user_metadata 5000 levels deep",
      method: "POST",
      path: "/api/assets/from-hash",
      ...json(`{"hash":"${v.storedHash}","user_metadata":${deepJson(5000)}}`),
      status: 400,
      code: "INVALID_BODY",
    },
    {
      name: "(b) upload user_metadata 5000 levels deep",
      method: "POST",
      path: "/api/assets",
      ...upload([
        ["tags", '["input"]'],
        ["user_metadata", deepJson(5000)],
      ]),
      status: 400,
      code: "INVALID_BODY",
    },
    {
      name: "(b) metadata_filter 40 levels deep",
      method: "GET",
      path: `/api/assets?metadata_filter=${encodeURIComponent(deepJson(40))}`,
      status: 400,
      code: "INVALID_QUERY",
    },
    {
      name: "(b) user_metadata 32 levels deep: the limit itself",
      method: "PUT",
      path: `/api/assets/${v.id}`,
      ...json(`{"user_metadata":${deepJson(31)}}`),
      status: 200,
    },
    // (c) one tag limit on every path that adds tags (three posts of 64 once left 194 tags on a record).
    {
      name: "(c) POST tags: 63 more fill the record to 64",
      method: "POST",
      path: `/api/assets/${v.id}/tags`,
      ...json(limitTags(63, "c")),
      status: 200,
    },
    {
      name: "(c) POST tags: 64 more are refused whole",
      method: "POST",
      path: `/api/assets/${v.id}/tags`,
      ...json(limitTags(64, "d")),
      status: 400,
      code: "INVALID_BODY",
    },
    {
      name: "(c) POST tags: one more is refused",
      method: "POST",
      path: `/api/assets/${v.id}/tags`,
      ...json(limitTags(1, "e")),
      status: 400,
      code: "INVALID_BODY",
    },
    { name: "(c) PUT 65 tags", method: "PUT", path: `/api/assets/${v.id}`, ...json(limitTags(65, "f")), status: 400, code: "INVALID_BODY" },
    {
      name: "(c) upload with 65 tags",
      method: "POST",
      path: "/api/assets",
      ...upload([["tags", JSON.stringify(["input", ...csv(64, "g").split(",")])]]),
      status: 400,
      code: "INVALID_BODY",
    },
    // (e) a __proto__ key is the user's data: kept whole (it was once dropped silently).
    {
      name: "(e) PUT user_metadata with __proto__",
      method: "PUT",
      path: `/api/assets/${v.id}`,
      ...json('{"user_metadata":{"__proto__":{"polluted":true},"k":1}}'),
      status: 200,
      keeps: '"user_metadata":{"__proto__":{"polluted":true},"k":1}',
    },
    {
      name: "(e) the record still holds it",
      method: "GET",
      path: `/api/assets/${v.id}`,
      status: 200,
      keeps: '"__proto__":{"polluted":true}',
    },
    {
      name: "(e) from-hash with __proto__",
      method: "POST",
      path: "/api/assets/from-hash",
      ...json(`{"hash":"${v.storedHash}","user_metadata":{"__proto__":1}}`),
      status: 201,
      keeps: '"user_metadata":{"__proto__":1}',
    },
    // POST /api/assets' refusals (nothing stored from any of them).
    { name: "upload: not multipart", method: "POST", path: "/api/assets", ...json("{}"), status: 415, code: "UNSUPPORTED_MEDIA_TYPE" },
    {
      name: "upload: empty file",
      method: "POST",
      path: "/api/assets",
      ...upload([["tags", '["input"]']], Buffer.alloc(0)),
      status: 400,
      code: "EMPTY_UPLOAD",
    },
    {
      name: "upload: no file, no hash",
      method: "POST",
      path: "/api/assets",
      ...(() => {
        const m = multipart([{ name: "tags", body: '["input"]' }]);
        return { body: m.body, contentType: m.contentType };
      })(),
      status: 400,
      code: "MISSING_FILE",
    },
    {
      name: "upload: no destination tag",
      method: "POST",
      path: "/api/assets",
      ...upload([["tags", '["nowhere"]']], Buffer.from(`nowhere ${v.id}`)),
      status: 400,
      code: "INVALID_BODY",
    },
    {
      name: "upload: a hash that is not the file's",
      method: "POST",
      path: "/api/assets",
      ...upload([
        ["hash", `blake3:${"5".repeat(64)}`],
        ["tags", '["input"]'],
      ]),
      status: 400,
      code: "HASH_MISMATCH",
    },
  ];
}
