import { useEffect, useState } from "preact/hooks";
import { getCatalogState, type CatalogState } from "../api/readiness.ts";
import { countFormat, timeAgo } from "../ui/format.ts";

const POLL_MS = 2000;

/** The catalog's state, asked again every 2 s while it is empty or a mirror pass runs. */
export function useCatalogState(): CatalogState | null {
  const [state, setState] = useState<CatalogState | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = (): void => {
      getCatalogState(ctrl.signal).then(
        (s) => {
          setState(s);
          if (s && (s.state === "empty" || (s.mirror && s.mirror.phase !== "done"))) timer = setTimeout(ask, POLL_MS);
        },
        // A probe that failed (a restart, a slow answer) is asked again: the state must not freeze.
        () => {
          if (!ctrl.signal.aborted) timer = setTimeout(ask, POLL_MS);
        },
      );
    };
    ask();
    return () => {
      ctrl.abort();
      clearTimeout(timer);
    };
  }, []);
  return state;
}

const where = (source: string | null) => (source ? <code>{source}</code> : "its source");

function progressText(m: NonNullable<CatalogState["mirror"]>): string {
  if (m.phase === "listing") {
    return m.packs.read > 0
      ? `reading the pack list: ${countFormat.format(m.packs.read)}${m.packs.total ? ` of ${countFormat.format(m.packs.total)}` : ""} packs so far`
      : `reading the pack list (started ${timeAgo(m.startedAt)})`;
  }
  if (m.phase === "details") return `reading versions: ${countFormat.format(m.versions.done)} of ${countFormat.format(m.versions.of)} packs`;
  return "done";
}

/** One line under the search box: how fresh the catalog is and where it came from. */
export function CatalogLine({ catalog }: { catalog: CatalogState | null }) {
  if (!catalog || catalog.state === "empty") return null;
  const stale = catalog.state === "stale";
  return (
    <p class={`catalog-line ${stale ? "stale" : ""}`} data-testid="catalog-line" data-state={catalog.state}>
      {countFormat.format(catalog.nodes)} packs from {where(catalog.source)}
      {catalog.indexedAt && <>, indexed <time dateTime={catalog.indexedAt} title={catalog.indexedAt}>{timeAgo(catalog.indexedAt)}</time></>}
      {stale && <> · <strong>stale</strong>{catalog.lastError ? `: the last refresh failed (${catalog.lastError})` : ": served from an older copy"}</>}
      {catalog.mirror && catalog.mirror.phase !== "done" && <> · refreshing, {progressText(catalog.mirror)}</>}
    </p>
  );
}

/** Shown instead of "no match" while there is nothing to search: why, and how far the first mirror is. */
export function EmptyCatalog({ catalog }: { catalog: CatalogState }) {
  const m = catalog.mirror;
  const running = m && m.phase !== "done";
  // A fraction where the registry has said how much there is; an indeterminate bar until then.
  const pct = m && running ? (m.phase === "listing" ? (m.packs.total ? m.packs.read / m.packs.total : null) : m.versions.of ? m.versions.done / m.versions.of : null) : null;
  return (
    <div class="card notice" role="status" data-testid="catalog-empty">
      <h2>The catalog is empty{running ? ": the first mirror is running" : ""}</h2>
      {running && m ? (
        <>
          <p>Mirroring {where(catalog.source)}: {progressText(m)}. Packs appear here as soon as the list is read.</p>
          {pct === null ? <progress aria-label="mirror progress" /> : <progress max={100} value={Math.round(pct * 100)} aria-label="mirror progress" />}
        </>
      ) : (
        <p>Nothing has been read from {where(catalog.source)} yet.</p>
      )}
      {catalog.lastError && <p class="error-text">The last attempt failed: {catalog.lastError}</p>}
      {!running && !catalog.lastError && <p class="muted">The search will answer once the catalog is loaded.</p>}
    </div>
  );
}
