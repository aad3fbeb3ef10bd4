import { useState } from "preact/hooks";
import { contentUrl } from "../api/assets.ts";
import { navigate, type Place } from "../router.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { ErrorBox } from "../ui/error-box.tsx";
import { FileName } from "../ui/file-name.tsx";
import { useLatest } from "../ui/use-latest.ts";
import { isPicture } from "./asset-kind.ts";
import { KeyGate } from "./key-gate.tsx";
import { MaskEditor } from "./mask-editor.tsx";
import { originalFromParams } from "./mask-original.ts";
import { UploadForm } from "./upload-form.tsx";
import { maskHrefFor } from "./upload-page.tsx";
import { useAssetPages } from "./use-asset-pages.ts";

/** /ui/mask?asset=<id>: the editor for one stored image; without one, every image in the store to choose from. */
export function MaskPage({ place }: { place: Place }) {
  const chosen = place.params.has("asset") || place.params.has("name");
  return (
    <section aria-labelledby="mask-heading">
      <h1 id="mask-heading">Mask editor</h1>
      <KeyGate>
        {(key, changeKey) =>
          chosen ? (
            <ChosenImage params={place.params} apiKey={key} onUnauthorized={changeKey} />
          ) : (
            <>
              <StoreImages apiKey={key} />
              <details class="card">
                <summary>Or upload a new image to mask</summary>
                <UploadForm apiKey={key} imagesOnly onUnauthorized={changeKey} onUploaded={(u) => navigate(maskHrefFor(u.asset))} />
              </details>
            </>
          )
        }
      </KeyGate>
    </section>
  );
}

function ChosenImage({ params, apiKey, onUnauthorized }: { params: URLSearchParams; apiKey: string; onUnauthorized: () => void }) {
  const key = params.toString();
  const original = useLatest(`${apiKey}|${key}`, () => originalFromParams(params, apiKey));
  return (
    <>
      <p>
        <a href="/ui/mask">← Choose another image</a>
      </p>
      <ErrorBox message={original.error} />
      {original.data && <MaskEditor key={original.data.source} original={original.data} apiKey={apiKey} onUnauthorized={onUnauthorized} />}
    </>
  );
}

/** The images in the store, newest first, a page of records at a time (the list has no type filter: non-images are skipped here). */
function StoreImages({ apiKey }: { apiKey: string }) {
  const [name, setName] = useState("");
  const pages = useAssetPages(apiKey, { name });
  const images = pages.assets.filter((a) => isPicture(a.mime_type));
  return (
    <section class="card" aria-labelledby="pick-h">
      <h2 id="pick-h">Choose an image from the store</h2>
      <form
        class="gallery-filter"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setName((new FormData(e.currentTarget).get("name") as string | null) ?? "");
        }}
      >
        <label>
          Name contains <input name="name" type="search" placeholder="any" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox message={pages.error} />
      {!pages.loading && images.length === 0 && !pages.hasMore && (
        <p class="empty">No image in the store{name ? ` named like "${name}"` : ""} yet.</p>
      )}
      <ul class="gallery picker">
        {images.map((a) => (
          <li key={a.id} class="tile" data-id={a.id}>
            <a href={maskHrefFor(a)} class="pick" aria-label={`Mask ${a.name}`}>
              <AssetImage url={a.preview_url ?? contentUrl(a.id)} apiKey={apiKey} alt="" lazy />
              <span class="tile-title">
                <FileName name={a.name} />
              </span>
            </a>
          </li>
        ))}
      </ul>
      {pages.hasMore && (
        <button type="button" onClick={pages.loadMore} disabled={pages.loading}>
          {pages.loading ? "Loading…" : "More images"}
        </button>
      )}
    </section>
  );
}
