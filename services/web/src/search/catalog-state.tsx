import { useEffect, useState } from "preact/hooks";
import { getCatalogState, type CatalogState } from "../api/readiness.ts";
import { countFormat, formatClock, timeAgo, timeUntil } from "../ui/format.ts";

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
          if (s && (s.state === "empty" || (s.mirror && mirrorRunning(s)))) timer = setTimeout(ask, POLL_MS);
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

/** A pass under way: listing or reading versions, and not waiting for its next try. */
const mirrorRunning = (c: CatalogState): boolean =>
  !!c.mirror && (c.mirror.phase === "listing" || c.mirror.phase === "details") && !c.nextTry;

/** A source as a visitor may see it: a registry's URL, the demo catalog, or a file's name, never the server's path to it. */
export function where(source: string | null) {
  if (!source) return "its source";
  if (/^https?:\/\//i.test(source)) return <code>{source}</code>;
  if (source === "demo") return "the demo catalog";
  return (
    <>
      the file <code>{fileName(source)}</code>
    </>
  );
}

const fileName = (path: string): string => path.split(/[\\/]/).pop() || path;

/** An error as a visitor may see it: a server path in it (a file that could not be read) shortened to the file's name. */
export const withoutPaths = (text: string): string =>
  text.replace(/(^|[\s'"(])((?:[A-Za-z]:)?[\\/][^\s'"()]+)/g, (_m, lead: string, path: string) => lead + fileName(path));

/** When a failed read is tried again, in words. */
function nextTryText(next: NonNullable<CatalogState["nextTry"]>) {
  const tries = `${next.failedTries} ${next.failedTries === 1 ? "try" : "tries"}`;
  if (next.retrying && next.at) return <>Trying again {timeUntil(next.at)}.</>;
  if (!next.at) return <>It stopped after {tries}, and is not tried again until the service restarts.</>;
  return (
    <>
      It stopped after {tries}; the next try is at{" "}
      <time dateTime={next.at} title={next.at}>
        {formatClock(next.at)}
      </time>{" "}
      ({timeUntil(next.at)}).
    </>
  );
}

/** How to serve a catalog with no network (README: "Offline"). */
function OfflineAdvice() {
  return (
    <p class="muted" data-testid="offline-advice">
      To serve a catalog without a network, restart with <code>CATALOG_SOURCE=demo</code> (the demo catalog built in), a file of registry
      nodes (<code>CATALOG_SOURCE=./nodes.ndjson</code>, NDJSON or a JSON array) or a bundle made by <code>pnpm mirror export</code> (
      <code>CATALOG_SOURCE=./mirror.tar</code>).
    </p>
  );
}

function progressText(m: NonNullable<CatalogState["mirror"]>): string {
  if (m.phase === "listing") {
    return m.packs.read > 0
      ? `reading the pack list: ${countFormat.format(m.packs.read)}${m.packs.total ? ` of ${countFormat.format(m.packs.total)}` : ""} packs so far`
      : `reading the pack list (started ${timeAgo(m.startedAt)})`;
  }
  if (m.phase === "details")
    return `reading versions: ${countFormat.format(m.versions.done)} of ${countFormat.format(m.versions.of)} packs`;
  return "done";
}

/** One line under the search box: how fresh the catalog is and where it came from. */
export function CatalogLine({ catalog }: { catalog: CatalogState | null }) {
  if (!catalog || catalog.state === "empty") return null;
  const stale = catalog.state === "stale";
  return (
    <p class={`catalog-line ${stale ? "stale" : ""}`} data-testid="catalog-line" data-state={catalog.state}>
      {countFormat.format(catalog.nodes)} packs from {where(catalog.source)}
      {catalog.indexedAt && (
        <>
          , indexed{" "}
          <time dateTime={catalog.indexedAt} title={catalog.indexedAt}>
            {timeAgo(catalog.indexedAt)}
          </time>
        </>
      )}
      {stale && (
        <>
          {" "}
          · <strong>stale</strong>
          {catalog.lastError ? `: the last refresh failed (${withoutPaths(catalog.lastError)})` : ": served from an older copy"}
        </>
      )}
      {catalog.readingFrom && <> · read next from {where(catalog.readingFrom)}</>}
      {catalog.nextTry?.at && <> · next try {timeUntil(catalog.nextTry.at)}</>}
      {catalog.mirror && mirrorRunning(catalog) && <> · refreshing, {progressText(catalog.mirror)}</>}
    </p>
  );
}

/** Shown instead of "no match" while there is nothing to search: why, and how far the first mirror is. */
export function EmptyCatalog({ catalog }: { catalog: CatalogState }) {
  const m = catalog.mirror;
  const next = catalog.nextTry;
  const running = mirrorRunning(catalog);
  const stopped = !!next && !next.retrying;
  // A fraction where the registry has said how much there is; an indeterminate bar until then.
  const pct =
    m && running
      ? m.phase === "listing"
        ? m.packs.total
          ? m.packs.read / m.packs.total
          : null
        : m.versions.of
          ? m.versions.done / m.versions.of
          : null
      : null;
  return (
    <div class="card notice" role="status" data-testid="catalog-empty">
      <h2>The catalog is empty{running ? ": the first mirror is running" : stopped ? ": the first read failed" : ""}</h2>
      {running && m ? (
        <>
          <p>
            Mirroring {where(catalog.source)}: {progressText(m)}. Packs appear here as soon as the list is read.
          </p>
          {pct === null ? (
            <progress aria-label="mirror progress" />
          ) : (
            <progress max={100} value={Math.round(pct * 100)} aria-label="mirror progress" />
          )}
        </>
      ) : (
        <p>
          Nothing has been read from {where(catalog.source)} yet.{next && <> {nextTryText(next)}</>}
        </p>
      )}
      {catalog.lastError && <p class="error-text">The last attempt failed: {withoutPaths(catalog.lastError)}</p>}
      {stopped && <OfflineAdvice />}
      {!running && !catalog.lastError && <p class="muted">The search will answer once the catalog is loaded.</p>}
    </div>
  );
}
