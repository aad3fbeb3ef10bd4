import fc from "fast-check";

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
    fc.record({ hash: fc.oneof(t.hash, fc.constant(v.storedHash), fc.anything()), name: fc.anything(), tags: fc.anything(), user_metadata: fc.anything() }).map((o) => JSON.stringify(o)),
    fc.record({ tags: fc.oneof(fc.array(fc.oneof(...t.tags, fc.integer(), fc.constant(null)), { maxLength: 70 }), fc.anything()) }).map((o) => JSON.stringify(o)),
    fc.record({ name: fc.oneof(...t.name), tags: fc.array(t.nameTags, { maxLength: 3 }) }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
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
