import type { UploadResult } from "@app/contracts";
import { navigate, type Place } from "../router.ts";
import { KeyGate } from "./key-gate.tsx";
import { MaskEditor } from "./mask-editor.tsx";
import { UploadForm } from "./upload-form.tsx";
import { maskHref } from "./upload-page.tsx";
import { readHistory } from "./upload-history.ts";

/** /ui/mask?name=&subfolder=&type=: the editor for one stored image, or a way to choose one. */
export function MaskPage({ place }: { place: Place }) {
  const name = place.params.get("name");
  const original: UploadResult | null = name ? { name, subfolder: place.params.get("subfolder") ?? "", type: place.params.get("type") ?? "input" } : null;
  return (
    <section aria-labelledby="mask-heading">
      <h1 id="mask-heading">Mask editor</h1>
      <KeyGate>
        {(key, changeKey) =>
          original ? (
            <MaskEditor original={original} apiKey={key} onUnauthorized={changeKey} />
          ) : (
            <>
              <p>Upload the image to mask, or choose one uploaded from this browser.</p>
              <UploadForm apiKey={key} onUnauthorized={changeKey} onUploaded={(u) => navigate(maskHref(u.result))} />
              <RecentImages />
            </>
          )
        }
      </KeyGate>
    </section>
  );
}

function RecentImages() {
  const images = readHistory().filter((e) => e.kind === "image").slice(0, 12);
  if (images.length === 0) return null;
  return (
    <nav class="card" aria-label="Recent uploads">
      <h2>Recent uploads</h2>
      <ul class="plain">
        {images.map((e) => (
          <li key={e.name}>
            <a href={maskHref(e)}>{e.fileName ?? e.name}</a> <span class="muted">{e.name.slice(0, 12)}…</span>
          </li>
        ))}
      </ul>
    </nav>
  );
}
