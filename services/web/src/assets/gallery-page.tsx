import type { Asset } from "@app/contracts";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { downloadAsset } from "../api/assets.ts";
import { describeError } from "../api/http.ts";
import { navigate, withParams, type Place } from "../router.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { countFormat } from "../ui/format.ts";
import { AssetTile } from "./asset-tile.tsx";
import { AssetViewer } from "./asset-viewer.tsx";
import { KeyGate } from "./key-gate.tsx";
import { useAssetPages } from "./use-asset-pages.ts";

/** /ui/gallery?tag=&name=: every asset of the key, a page at a time as the list scrolls. */
export function GalleryPage({ place }: { place: Place }) {
  return (
    <section aria-labelledby="gallery-heading">
      <h1 id="gallery-heading">Gallery</h1>
      <KeyGate>{(key, changeKey) => <Gallery apiKey={key} place={place} onUnauthorized={changeKey} />}</KeyGate>
    </section>
  );
}

function Gallery({ apiKey, place, onUnauthorized }: { apiKey: string; place: Place; onUnauthorized: () => void }) {
  const tag = place.params.get("tag") ?? "";
  const name = place.params.get("name") ?? "";
  const pages = useAssetPages(apiKey, { tag, name });
  const [open, setOpen] = useState<Asset | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const end = useRef<HTMLDivElement>(null);
  const filterBy = (next: { tag?: string; name?: string }) => navigate(withParams("/ui/gallery", { tag, name, ...next }), "replace");

  // Infinite scroll: the next page is asked for when the end of the list comes near.
  useEffect(() => {
    if (!end.current || !pages.hasMore) return;
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) pages.loadMore();
      },
      { rootMargin: "600px" },
    );
    seen.observe(end.current);
    return () => seen.disconnect();
  }, [pages.hasMore, pages.loading, pages.assets.length]);

  const sameContent = useMemo(() => {
    const counts = new Map<string, number>();
    for (const a of pages.assets) counts.set(a.hash, (counts.get(a.hash) ?? 0) + 1);
    return counts;
  }, [pages.assets]);
  const download = (a: Asset) => {
    setActionError(null);
    downloadAsset(a.id, a.name, apiKey).catch((err: unknown) => setActionError(describeError(err)));
  };

  const current = open && (pages.assets.find((a) => a.id === open.id) ?? open);
  // A list that could not be read (a wrong key, the server down) has no count to tell: its error says it all.
  const unread = pages.error !== null && pages.assets.length === 0;
  if (!pages.available) return <p class="notice">This server has no asset API (GET /api/assets answered 404): there is nothing to list.</p>;
  return (
    <>
      <form
        class="gallery-filter"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          filterBy({ tag: (data.get("tag") as string | null) ?? "", name: (data.get("name") as string | null) ?? "" });
        }}
      >
        <label>
          Name contains <input name="name" type="search" defaultValue={name} key={`n${name}`} placeholder="any" />
        </label>
        <label>
          Tag <input name="tag" type="search" defaultValue={tag} key={`t${tag}`} placeholder="any" />
        </label>
        <button type="submit">Filter</button>
        {(tag || name) && (
          <button type="button" class="link" onClick={() => filterBy({ tag: "", name: "" })}>
            Show all
          </button>
        )}
      </form>
      <ErrorBox message={pages.error ?? actionError}>
        {pages.error && (
          <>
            {" "}
            <button type="button" class="link" onClick={onUnauthorized}>
              Enter another key
            </button>
          </>
        )}
      </ErrorBox>
      {!unread && (
        <p class="muted" data-testid="gallery-count" aria-live="polite">
          {pages.loading && pages.assets.length === 0
            ? "Loading…"
            : `${countFormat.format(pages.total)} ${pages.total === 1 ? "asset" : "assets"}${tag ? ` tagged "${tag}"` : ""}${name ? ` named like "${name}"` : ""}${pages.assets.length < pages.total ? ` · showing ${countFormat.format(pages.assets.length)}` : ""}`}
        </p>
      )}
      {!unread && !pages.loading && pages.total === 0 && (
        <p class="empty">
          Nothing here yet. <a href="/ui/upload">Upload a file</a>.
        </p>
      )}
      <ul class="gallery">
        {pages.assets.map((a) => (
          <AssetTile
            key={a.id}
            asset={a}
            apiKey={apiKey}
            sameContent={sameContent.get(a.hash) ?? 1}
            onOpen={() => setOpen(a)}
            onTag={(t) => filterBy({ tag: t })}
            onDownload={() => download(a)}
          />
        ))}
      </ul>
      <div ref={end} class="list-end">
        {pages.hasMore && (
          <button type="button" onClick={pages.loadMore} disabled={pages.loading}>
            {pages.loading ? "Loading…" : "Load more"}
          </button>
        )}
        {!pages.hasMore && pages.assets.length > 0 && <p class="muted small">The end: every asset is shown.</p>}
      </div>
      {current && (
        <AssetViewer
          key={current.id}
          asset={current}
          apiKey={apiKey}
          onClose={() => setOpen(null)}
          onChanged={(a) => {
            pages.replace(a);
            setOpen(a);
          }}
          onDeleted={(id) => {
            pages.remove(id);
            setOpen(null);
          }}
          onDownload={() => download(current)}
        />
      )}
    </>
  );
}
