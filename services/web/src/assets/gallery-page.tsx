import { listAssets, viewUrl, type ListedAsset } from "../api/assets.ts";
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
  maskable?: { name: string; subfolder: string; type: string };
}

const STORED_NAME = /^[0-9a-f]{64}\.[a-z0-9]+$/;

/** An asset of GET /api/assets: its bytes from /api/assets/{id}/content; an uploaded image (not a mask or a derivative) can be masked. */
function serverTile(a: ListedAsset): Tile {
  const id = a.id ?? "";
  const name = a.name ?? id;
  const isSource = !a.tags?.some((t) => t === "mask" || t === "derived");
  return {
    key: id,
    name,
    title: name,
    detail: [a.tags?.join(", "), a.size !== undefined ? `${(a.size / 1024).toFixed(1)} kB` : undefined].filter(Boolean).join(" · "),
    url: `/api/assets/${encodeURIComponent(id)}/content`,
    maskable: isSource && a.mime_type?.startsWith("image/") && STORED_NAME.test(name) ? { name, subfolder: "", type: "input" } : undefined,
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
  const listed = useLatest(apiKey, (signal) => listAssets(apiKey, signal));
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
    : readHistory().map((e) => ({ key: e.name, name: e.name, title: e.fileName ?? e.name, detail: `${e.kind} · ${e.type}${e.subfolder ? ` · ${e.subfolder}` : ""}`, url: viewUrl(e.name), maskable: e.kind === "image" ? e : undefined }));
  return (
    <>
      <p class="muted">{fromServer ? `${listed.data!.total ?? tiles.length} assets in the store.` : "This server has no asset list (GET /api/assets answered 404): showing the uploads made from this browser."}</p>
      {tiles.length === 0 && <p class="empty">Nothing yet. <a href="/ui/upload">Upload an image</a>.</p>}
      <ul class="gallery">
        {tiles.map((t) => (
          <li key={t.key} class="card tile" data-name={t.name}>
            <AssetImage url={t.url} apiKey={apiKey} alt={t.title} />
            <p class="tile-title" title={t.title}>{t.title}</p>
            <p class="muted">{t.detail}</p>
            {t.maskable && <a href={maskHref(t.maskable)}>Mask</a>}
          </li>
        ))}
      </ul>
    </>
  );
}
