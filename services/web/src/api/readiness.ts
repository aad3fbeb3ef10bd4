/**
 * The catalog's state as the gateway's /readyz tells it (services/search `CatalogStatus`): how
 * fresh the index is, where it came from, and a first mirror's progress. Absent where search
 * runs behind the gateway's proxy (its /readyz carries only the services' readiness).
 */
export interface CatalogState {
  state: "fresh" | "stale" | "empty";
  /** Where the catalog served came from: a registry URL, a file path on the server, or `demo`. */
  source: string | null;
  /** The configured source, when the catalog served came from elsewhere (a snapshot): read next. */
  readingFrom?: string;
  indexedAt: string | null;
  nodes: number;
  lastError: string | null;
  /** The parts of search's MirrorProgress this page shows. */
  mirror?: {
    phase: "listing" | "details" | "done" | "failed";
    startedAt: string;
    packs: { read: number; total: number | null };
    versions: { done: number; of: number };
  } | null;
  /** After a failed read: when the next try is (null: not before a restart), and whether the tries of this refresh are used up. */
  nextTry?: { at: string | null; retrying: boolean; failedTries: number } | null;
}

/** /readyz answers 503 while starting, with the same body: read it whatever the status. */
export async function getCatalogState(signal: AbortSignal): Promise<CatalogState | null> {
  const res = await fetch("/readyz", { signal, headers: { Accept: "application/json" } });
  try {
    const body = (await res.json()) as { catalog?: CatalogState };
    return body.catalog && typeof body.catalog.state === "string" ? body.catalog : null;
  } catch {
    return null;
  }
}
