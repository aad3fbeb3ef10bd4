import type { RequestHandler } from "express";
import type { SearchEngine } from "../../ports/search-engine.ts";
import type { StoredNode } from "../../domain/catalog-record.ts";
import type { JsonText } from "../../fast/node-output.ts";
import { sendJsonText } from "../errors.ts";

/**
 * A channel file made from the whole catalog, built once per index: the embedded engine hands
 * the same array until a reindex, so the file's text is kept beside it and dropped with it.
 * (Meilisearch pages its documents on every request; Manager asks these once a day.)
 */
export function catalogFile(engine: SearchEngine, build: (packs: readonly StoredNode[]) => unknown): RequestHandler {
  const built = new WeakMap<readonly StoredNode[], JsonText>();
  return async (_req, res) => {
    const packs = await engine.all();
    let text = built.get(packs);
    if (!text) {
      const json = JSON.stringify(build(packs));
      text = { json, bytes: Buffer.byteLength(json) };
      built.set(packs, text);
    }
    sendJsonText(res, text);
  };
}
