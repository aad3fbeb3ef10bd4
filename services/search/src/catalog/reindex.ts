import type { CatalogReindexResult } from "@app/contracts";
import type { z } from "zod";
import type { LoadProgress } from "../adapters/catalog-source.ts";

export type ReindexResult = z.infer<typeof CatalogReindexResult>;
export type ReindexProgressEvent = LoadProgress & { phase: "reading" | "indexing" | "done" };

export interface ReindexOptions {
  /** Swap the new catalog in even when it is empty or less than half the size of the indexed one (a registry: a full pass). */
  force?: boolean;
  /** A registry: a full pass (every pack and its versions) whenever the last one was. */
  full?: boolean;
  onProgress?: (p: ReindexProgressEvent) => void;
  /** False when the caller logs a failure itself (the in-process refresh, which knows whether it retries). */
  logFailure?: boolean;
}

/** Read a source, swap the new index in (and, embedded, persist it for restarts and other processes). */
export type Reindex = (source: string, opts?: ReindexOptions) => Promise<ReindexResult>;
