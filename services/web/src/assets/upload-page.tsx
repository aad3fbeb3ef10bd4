import type { Asset } from "@app/contracts";
import { useState } from "preact/hooks";
import { contentUrl } from "../api/assets.ts";
import { withParams } from "../router.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { CopyButton } from "../ui/copy-button.tsx";
import { formatBytes } from "../ui/format.ts";
import { isPicture, storedFileName } from "./asset-kind.ts";
import { KeyGate } from "./key-gate.tsx";
import { UploadForm, type Uploaded } from "./upload-form.tsx";

/** The mask editor for a stored image: by its record (any image in the store). */
export const maskHrefFor = (a: Pick<Asset, "id">): string => withParams("/ui/mask", { asset: a.id });

/** /ui/upload: any file, settings first, progress (pause and resume where resumable), then what the store recorded. */
export function UploadPage() {
  const [last, setLast] = useState<Uploaded | null>(null);
  return (
    <section aria-labelledby="upload-heading">
      <h1 id="upload-heading">Upload a file</h1>
      <KeyGate>
        {(key, changeKey) => (
          <>
            <UploadForm apiKey={key} onUploaded={setLast} onUnauthorized={changeKey} />
            {last && <UploadResult uploaded={last} apiKey={key} />}
          </>
        )}
      </KeyGate>
    </section>
  );
}

function UploadResult({ uploaded: { asset, alreadyStored, via, file }, apiKey }: { uploaded: Uploaded; apiKey: string }) {
  // A record of bytes the store already had names no stored file of its own: the name given is the one to show.
  const stored = storedFileName(asset);
  const subfolder = typeof asset.user_metadata.subfolder === "string" ? asset.user_metadata.subfolder : "";
  return (
    <section class="card upload-result" aria-live="polite" aria-labelledby="stored-h" data-asset={asset.id}>
      <h2 id="stored-h">
        Stored{" "}
        {alreadyStored ? (
          <span class="badge" data-testid="dedup">
            already stored
          </span>
        ) : (
          <span class="badge ok">new</span>
        )}
      </h2>
      <p class="muted small">
        from {file.name} · {formatBytes(asset.size)} · {asset.mime_type} ·{" "}
        {via === "resumable" ? "resumable upload" : via === "form" ? "one-request upload" : "the store had these bytes: nothing was sent"}
        {subfolder && <> · subfolder {subfolder}</>}
      </p>
      <dl class="copy-list">
        <CopyRow term="Name" value={asset.name} testId="uploaded-name" />
        {stored && stored !== asset.name && <CopyRow term="Stored as" value={stored} testId="stored-name" />}
        <CopyRow term="Hash" value={asset.hash} testId="uploaded-hash" />
        {/* /upload/mask paints on an image: nothing else is an original for it. */}
        {isPicture(asset.mime_type) && <CopyRow term="original_ref" value={asset.hash} testId="original-ref" hint="for /upload/mask" />}
        <CopyRow term="Tags" value={asset.tags.join(", ")} />
      </dl>
      {isPicture(asset.mime_type) && (
        <>
          <div class="preview">
            <AssetImage url={contentUrl(asset.id)} apiKey={apiKey} alt={`the uploaded image ${asset.name}`} />
          </div>
          <p>
            <a class="button" href={maskHrefFor(asset)}>
              Draw a mask on it
            </a>
          </p>
        </>
      )}
      <p>
        <a href={withParams("/ui/gallery", { name: asset.name })}>Find it in the gallery</a>
      </p>
    </section>
  );
}

function CopyRow({ term, value, testId, hint }: { term: string; value: string; testId?: string; hint?: string }) {
  return (
    <div class="copy-item">
      <dt>
        {term}
        {hint && <span class="muted small"> {hint}</span>}
      </dt>
      <dd>
        <code data-testid={testId}>{value}</code>
        <CopyButton text={value} label="Copy" />
      </dd>
    </div>
  );
}
