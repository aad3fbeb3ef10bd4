/**
 * The catalog's state as the gateway's /readyz tells it (services/search `CatalogStatus`): how
 * fresh the index is, where it came from, and a first mirror's progress. Absent where search
 * runs behind the gateway's proxy (its /readyz carries only the services' readiness).
 */
export interface CatalogState {
  state: "fresh" | "stale" | "empty";
  source: string | null;
  indexedAt: string | null;
  nodes: number;
  lastError: string | null;
  /** The parts of search's MirrorProgress this page shows. */
  mirror?: { phase: "listing" | "details" | "done"; startedAt: string; packs: { read: number; total: number | null }; versions: { done: number; of: number } } | null;
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
