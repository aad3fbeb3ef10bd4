import type { Asset } from "@app/contracts";
import { contentUrl } from "../api/assets.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { FileName } from "../ui/file-name.tsx";
import { formatBytes } from "../ui/format.ts";
import { isPicture, kindOf, shortHash } from "./asset-kind.ts";
import { maskHrefFor } from "./upload-page.tsx";

/**
 * One asset on the gallery's grid: its picture (or an icon with its kind), its whole name
 * (shortened in the middle, the extension kept), size and type, its content hash (records of
 * the same bytes show the same hash, and say how many share it), tags, and its actions.
 */
export function AssetTile({
  asset: a,
  apiKey,
  sameContent,
  onOpen,
  onTag,
  onDownload,
}: {
  asset: Asset;
  apiKey: string;
  sameContent: number;
  onOpen: () => void;
  onTag: (tag: string) => void;
  onDownload: () => void;
}) {
  const picture = isPicture(a.mime_type);
  // A nominated preview (preview_id) is a picture; the asset's own bytes only when they are one (a text's preview_url is its text).
  const preview = picture ? (a.preview_url ?? contentUrl(a.id)) : a.preview_id && a.preview_url ? a.preview_url : null;
  return (
    <li class="card tile" data-id={a.id} data-name={a.name} data-hash={a.hash}>
      <button type="button" class="tile-open" onClick={onOpen} aria-label={`Open ${a.name}`}>
        {preview ? (
          <AssetImage url={preview} apiKey={apiKey} alt={a.name} lazy />
        ) : (
          <div class="file-icon" role="img" aria-label={`${a.mime_type}: ${a.name}`} data-testid="file-icon">
            <span>{kindOf(a.mime_type, a.name)}</span>
          </div>
        )}
      </button>
      <p class="tile-title">
        <FileName name={a.name} />
      </p>
      <p class="muted small tile-detail">
        {formatBytes(a.size)} · {a.mime_type}
      </p>
      <p class="small tile-hash">
        <code class="hash-chip" title={a.hash}>
          {shortHash(a.hash)}
        </code>
        {sameContent > 1 && (
          <span class="badge" data-testid="same-content" title="other records hold exactly these bytes">
            same bytes ×{sameContent}
          </span>
        )}
      </p>
      {a.tags.length > 0 && (
        <p class="tile-tags">
          {a.tags.map((name) => (
            <button type="button" class="chip" key={name} onClick={() => onTag(name)} title={`Show only assets tagged "${name}"`}>
              {name}
            </button>
          ))}
        </p>
      )}
      <p class="tile-actions">
        <button type="button" class="link" onClick={onOpen}>
          Open
        </button>
        <button type="button" class="link" onClick={onDownload}>
          Download
        </button>
        {picture && <a href={maskHrefFor(a)}>Mask</a>}
      </p>
    </li>
  );
}
