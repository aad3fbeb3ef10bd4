import type { Asset } from "@app/contracts";
import { useEffect, useRef, useState } from "preact/hooks";
import { addTags, contentUrl, deleteAsset, readTextStart, removeTags, renameAsset } from "../api/assets.ts";
import { describeError } from "../api/http.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { CopyButton } from "../ui/copy-button.tsx";
import { ErrorBox } from "../ui/error-box.tsx";
import { FileName } from "../ui/file-name.tsx";
import { formatBytes, formatDate } from "../ui/format.ts";
import { isPicture, isText, storedFileName } from "./asset-kind.ts";
import { maskHrefFor } from "./upload-page.tsx";

/**
 * One asset opened in a modal dialog (Escape closes it, focus stays inside): the picture at full
 * size, the start of a text, or a model's record; and what can be done to it: download, mask,
 * rename, tags, delete (after a second, explicit confirmation).
 */
export function AssetViewer({ asset: a, apiKey, onClose, onChanged, onDeleted, onDownload }: { asset: Asset; apiKey: string; onClose: () => void; onChanged: (a: Asset) => void; onDeleted: (id: string) => void; onDownload: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState(a.name);
  const [newTag, setNewTag] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  useEffect(() => setName(a.name), [a.name]);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const rename = () => run(async () => onChanged(await renameAsset(a.id, name.trim(), apiKey)));
  const tag = (t: string) => run(async () => onChanged({ ...a, tags: (await addTags(a.id, [t], apiKey)).total_tags }));
  const untag = (t: string) => run(async () => onChanged({ ...a, tags: (await removeTags(a.id, [t], apiKey)).total_tags }));
  const remove = () => run(async () => {
    await deleteAsset(a.id, apiKey);
    onDeleted(a.id);
  });
  const stored = storedFileName(a);

  return (
    <dialog ref={dialog} class="viewer" aria-labelledby="viewer-h" onClose={onClose} onKeyDown={keepFocusInside}>
      <header class="viewer-head">
        <h2 id="viewer-h"><FileName name={a.name} /></h2>
        <button type="button" onClick={() => dialog.current?.close()} aria-label="Close">Close</button>
      </header>
      <div class="viewer-body">
        <div class="viewer-content">
          {isPicture(a.mime_type) ? (
            <AssetImage url={contentUrl(a.id)} apiKey={apiKey} alt={a.name} testId="full-image" />
          ) : isText(a.mime_type) ? (
            <TextPreview id={a.id} apiKey={apiKey} />
          ) : (
            <div class="file-icon big" data-testid="no-preview"><span>{a.mime_type}</span></div>
          )}
        </div>
        <div class="viewer-side">
          <ErrorBox message={error} />
          <div class="toolbar">
            <button type="button" class="primary" onClick={onDownload}>Download</button>
            {isPicture(a.mime_type) && <a class="button secondary" href={maskHrefFor(a)}>Draw a mask</a>}
            <CopyButton text={a.hash} label="Copy hash" />
          </div>
          <dl class="facts" data-testid="asset-facts">
            <div class="fact-row"><dt>Size</dt><dd>{formatBytes(a.size)}{a.size >= 1000 && ` (${a.size.toLocaleString("en")} bytes)`}</dd></div>
            <div class="fact-row"><dt>Type</dt><dd>{a.mime_type}</dd></div>
            <div class="fact-row"><dt>Hash</dt><dd><code>{a.hash}</code></dd></div>
            {stored && <div class="fact-row"><dt>Stored as</dt><dd><code>{stored}</code></dd></div>}
            <div class="fact-row"><dt>Added</dt><dd>{formatDate(a.created_at)}</dd></div>
            <div class="fact-row"><dt>Id</dt><dd><code>{a.id}</code></dd></div>
            {Object.keys(a.user_metadata).length > 0 && <div class="fact-row"><dt>Metadata</dt><dd><pre class="json small">{JSON.stringify(a.user_metadata, null, 2)}</pre></dd></div>}
            {a.metadata && Object.keys(a.metadata).length > 0 && <div class="fact-row"><dt>Service</dt><dd><pre class="json small">{JSON.stringify(a.metadata, null, 2)}</pre></dd></div>}
          </dl>
          <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void rename(); }}>
            <label for="rename">Name</label>
            <div class="copy-row">
              <input id="rename" value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={512} />
              <button type="submit" disabled={busy || name.trim() === a.name || !name.trim()}>Rename</button>
            </div>
          </form>
          <div class="tag-editor">
            <p class="label">Tags</p>
            <ul class="plain chips" aria-label="Tags">
              {a.tags.map((t) => (
                <li key={t} class="chip editable" data-tag={t}>
                  <span class="chip-text" title={t}>{t}</span>
                  <button type="button" class="chip-remove" aria-label={`Remove tag ${t}`} disabled={busy} onClick={() => void untag(t)}>×</button>
                </li>
              ))}
            </ul>
            <form class="copy-row" onSubmit={(e) => { e.preventDefault(); const t = newTag.trim(); if (t) void tag(t).then(() => setNewTag("")); }}>
              <input id="new-tag" aria-label="New tag" value={newTag} onInput={(e) => setNewTag(e.currentTarget.value)} placeholder="add a tag" />
              <button type="submit" disabled={busy || !newTag.trim()}>Add tag</button>
            </form>
          </div>
          <div class="danger-zone">
            {!confirming ? (
              <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete…</button>
            ) : (
              <div role="alertdialog" aria-labelledby="confirm-h" class="confirm">
                <p id="confirm-h"><strong>Delete “{a.name}”?</strong> The record goes; the bytes stay while another record holds them.</p>
                <button type="button" class="danger" data-testid="confirm-delete" disabled={busy} onClick={() => void remove()}>Delete for good</button>{" "}
                <button type="button" onClick={() => setConfirming(false)}>Keep it</button>
              </div>
            )}
          </div>
        </div>
      </div>
    </dialog>
  );
}

/** Tab from the last control comes back to the first (and Shift+Tab the other way): a modal dialog never lets focus out to the page's edge. */
function keepFocusInside(e: KeyboardEvent): void {
  if (e.key !== "Tab") return;
  const box = e.currentTarget as HTMLElement;
  const all = Array.from(box.querySelectorAll<HTMLElement>("button:not([disabled]), a[href], input:not([disabled]), select, textarea, [tabindex]:not([tabindex='-1'])"));
  if (all.length === 0) return;
  const first = all[0]!;
  const last = all[all.length - 1]!;
  if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  } else if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last.focus();
  }
}

function TextPreview({ id, apiKey }: { id: string; apiKey: string }) {
  const [text, setText] = useState<{ text: string; cut: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    readTextStart(id, apiKey).then(setText, (err: unknown) => setError(describeError(err)));
  }, [id, apiKey]);
  if (error) return <p class="error">{error}</p>;
  if (!text) return <p class="muted">Loading…</p>;
  return (
    <>
      <pre class="text-preview" data-testid="text-preview">{text.text}</pre>
      {text.cut && <p class="muted small">The first 16 kB; download it for the rest.</p>}
    </>
  );
}
