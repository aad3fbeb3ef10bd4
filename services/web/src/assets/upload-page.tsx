import { useState } from "preact/hooks";
import { viewUrl } from "../api/assets.ts";
import { withParams } from "../router.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { KeyGate } from "./key-gate.tsx";
import { UploadForm, type Uploaded } from "./upload-form.tsx";

export function maskHref(u: { name: string; subfolder: string; type: string }): string {
  return withParams("/ui/mask", { name: u.name, subfolder: u.subfolder, type: u.type });
}

/** /ui/upload: pick or drop an image, see what the store called it. */
export function UploadPage() {
  const [last, setLast] = useState<Uploaded | null>(null);
  return (
    <section aria-labelledby="upload-heading">
      <h1 id="upload-heading">Upload an image</h1>
      <KeyGate>
        {(key, changeKey) => (
          <>
            <UploadForm apiKey={key} onUploaded={setLast} onUnauthorized={changeKey} />
            {last && (
              <div class="card upload-result" aria-live="polite">
                <h2>Stored</h2>
                <p>
                  <code data-testid="uploaded-name">{last.result.name}</code>{" "}
                  {last.alreadyStored ? <span class="badge" data-testid="dedup">already stored</span> : <span class="badge ok">new</span>}
                </p>
                <p class="muted">from {last.file.name} · subfolder “{last.result.subfolder}” · type {last.result.type}</p>
                <div class="preview"><AssetImage url={viewUrl(last.result.name)} apiKey={key} alt={`the uploaded image ${last.file.name}`} /></div>
                <p><a class="button" href={maskHref(last.result)}>Draw a mask on it</a></p>
              </div>
            )}
          </>
        )}
      </KeyGate>
    </section>
  );
}
