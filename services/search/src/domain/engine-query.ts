import type { StoredNode } from "./catalog-record.ts";
import type { JsonText, PageText } from "../fast/node-output.ts";

/** What an engine is asked: already validated and trimmed by the query layer. */
export interface EngineQuery {
  search?: string;
  repositoryUrl?: string;
  appNode?: string;
  os?: string;
  accelerator?: string;
  includeBanned: boolean;
  /** Only these packs (the registry list's `node_id`), still under every other filter and rule. */
  ids?: readonly string[];
  offset: number;
  limit: number;
}

export interface EngineResult {
  nodes: StoredNode[];
  total: number;
  /** The nodes' JSON texts, when the engine keeps them at hand (the embedded one does, by doc number). */
  texts?: readonly JsonText[];
  /** Written once by `resultPage` (the route's page text), read by the requests that get this result again. */
  pageText?: PageText;
}
