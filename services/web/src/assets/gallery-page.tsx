import { useState } from "preact/hooks";
import type { Asset } from "@app/contracts";
import { listAssets, viewUrl } from "../api/assets.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { ErrorBox } from "../ui/error-box.tsx";
import { useLatest } from "../ui/use-latest.ts";
import { KeyGate } from "./key-gate.tsx";
import { maskHref } from "./upload-page.tsx";
import { readHistory } from "./upload-history.ts";

interface Tile {
  key: string;
  /** The stored name (<blake3>.<ext>). */
  name: string;
  title: string;
  detail: string;
  url: string;
  /** Shown as a picture; anything else (a model, a video, a text) as an icon with its type. */
  image: boolean;
  mime?: string;
  tags?: string[];
  maskable?: { name: string; subfolder: string; type: string };
}

/** Raster images only: an SVG is never rendered from the store (the API sends it as a download). */
const isPicture = (mime: string) => /^image\/(png|jpeg|webp|gif|avif)$/.test(mime);

const sizeText = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(2)} GB` : bytes >= 1024 ** 2 ? `${(bytes / 1024 ** 2).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} kB`;

/** What a file icon says: the kind of content, from its MIME type. */
function kindOf(mime: string): string {
  const [type, sub = ""] = mime.split("/");
  if (type === "video" || type === "audio" || type === "text") return type;
  if (type === "image") return sub.replace(/\+xml$/, "").toUpperCase();
  return mime === "application/octet-stream" ? "file" : sub.split(/[.+-]/).pop()!;
}

const STORED_NAME = /^[0-9a-f]{64}\.[a-z0-9]+$/;

/** An asset of GET /api/assets: its bytes from /api/assets/{id}/content; an uploaded image (not a mask or a derivative) can be masked. */
function serverTile(a: Asset): Tile {
  const isSource = !a.tags.some((t) => t === "mask" || t === "derived");
  return {
    key: a.id,
    name: a.name,
    title: a.name,
    detail: [a.mime_type, sizeText(a.size)].join(" · "),
    url: `/api/assets/${encodeURIComponent(a.id)}/content`,
    image: isPicture(a.mime_type),
    mime: a.mime_type,
    tags: a.tags,
    maskable: isSource && a.mime_type.startsWith("image/") && STORED_NAME.test(a.name) ? { name: a.name, subfolder: "", type: "input" } : undefined,
  };
}

/** /ui/gallery: the store's assets (GET /api/assets), or this browser's uploads where the server has no asset list. */
export function GalleryPage() {
  return (
    <section aria-labelledby="gallery-heading">
      <h1 id="gallery-heading">Gallery</h1>
      <KeyGate>{(key, changeKey) => <Gallery apiKey={key} onUnauthorized={changeKey} />}</KeyGate>
    </section>
  );
}

function Gallery({ apiKey, onUnauthorized }: { apiKey: string; onUnauthorized: () => void }) {
  const [tag, setTag] = useState(() => new URLSearchParams(location.search).get("tag") ?? "");
  const listed = useLatest(`${apiKey}\u0000${tag}`, (signal) => listAssets(apiKey, signal, tag));
  const filterBy = (next: string) => {
    setTag(next);
    const url = new URL(location.href);
    if (next) url.searchParams.set("tag", next);
    else url.searchParams.delete("tag");
    history.replaceState(null, "", url);
  };
  if (listed.loading && !listed.data) return <p>Loading…</p>;
  if (listed.error) {
    return (
      <ErrorBox message={listed.error}>
        {" "}<button type="button" class="link" onClick={onUnauthorized}>Enter another key</button>
      </ErrorBox>
    );
  }
  const fromServer = listed.data !== null;
  const tiles: Tile[] = fromServer
    ? listed.data!.assets.map(serverTile)
    : readHistory().map((e) => ({ key: e.name, name: e.name, title: e.fileName ?? e.name, detail: `${e.kind} · ${e.type}${e.subfolder ? ` · ${e.subfolder}` : ""}`, url: viewUrl(e.name), image: true, maskable: e.kind === "image" ? e : undefined }));
  return (
    <>
      {fromServer && (
        <form class="tag-filter" role="search" onSubmit={(e) => { e.preventDefault(); filterBy(String(new FormData(e.currentTarget).get("tag") ?? "")); }}>
          <label>
            Tag <input name="tag" type="search" value={tag} placeholder="any" aria-label="Show only assets with this tag" />
          </label>{" "}
          <button type="submit">Filter</button>
          {tag && <> {" "}<button type="button" class="link" onClick={() => filterBy("")}>Show all</button></>}
        </form>
      )}
      <p class="muted">{fromServer ? `${listed.data!.total} assets${tag ? ` tagged "${tag}"` : " in the store"}.` : "This server has no asset list (GET /api/assets answered 404): showing the uploads made from this browser."}</p>
      {tiles.length === 0 && <p class="empty">Nothing yet. <a href="/ui/upload">Upload an image</a>.</p>}
      <ul class="gallery">
        {tiles.map((t) => (
          <li key={t.key} class="card tile" data-name={t.name}>
            {t.image ? (
              <AssetImage url={t.url} apiKey={apiKey} alt={t.title} />
            ) : (
              <div class="file-icon" role="img" aria-label={`${t.mime ?? "file"}: ${t.title}`} data-testid="file-icon">
                <span>{kindOf(t.mime ?? "")}</span>
              </div>
            )}
            <p class="tile-title" title={t.title}>{t.title}</p>
            <p class="muted">{t.detail}</p>
            {t.tags && t.tags.length > 0 && (
              <p class="tile-tags">
                {t.tags.map((name) => (
                  <button type="button" class="chip" key={name} onClick={() => filterBy(name)} title={`Show only assets tagged "${name}"`}>
                    {name}
                  </button>
                ))}
              </p>
            )}
            {t.maskable && <a href={maskHref(t.maskable)}>Mask</a>}
          </li>
        ))}
      </ul>
    </>
  );
}
