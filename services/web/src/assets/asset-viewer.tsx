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
export function AssetViewer({
  asset: a,
  apiKey,
  onClose,
  onChanged,
  onDeleted,
  onDownload,
}: {
  asset: Asset;
  apiKey: string;
  onClose: () => void;
  onChanged: (a: Asset) => void;
  onDeleted: (id: string) => void;
  onDownload: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  /** Every change goes through here: one at a time, its failure shown above the actions. */
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
  const edits: Edits = {
    busy,
    rename: (name) => run(async () => onChanged(await renameAsset(a.id, name, apiKey))),
    tag: (t) => run(async () => onChanged({ ...a, tags: (await addTags(a.id, [t], apiKey)).total_tags })),
    untag: (t) => run(async () => onChanged({ ...a, tags: (await removeTags(a.id, [t], apiKey)).total_tags })),
    remove: () =>
      run(async () => {
        await deleteAsset(a.id, apiKey);
        onDeleted(a.id);
      }),
  };

  return (
    <dialog ref={dialog} class="viewer" aria-labelledby="viewer-h" onClose={onClose} onKeyDown={keepFocusInside}>
      <header class="viewer-head">
        <h2 id="viewer-h">
          <FileName name={a.name} />
        </h2>
        <button type="button" onClick={() => dialog.current?.close()} aria-label="Close">
          Close
        </button>
      </header>
      <div class="viewer-body">
        <div class="viewer-content">
          <AssetContent asset={a} apiKey={apiKey} />
        </div>
        <div class="viewer-side">
          <ErrorBox message={error} />
          <div class="toolbar">
            <button type="button" class="primary" onClick={onDownload}>
              Download
            </button>
            {isPicture(a.mime_type) && (
              <a class="button secondary" href={maskHrefFor(a)}>
                Draw a mask
              </a>
            )}
            <CopyButton text={a.hash} label="Copy hash" />
          </div>
          <AssetFacts asset={a} />
          <RenameForm asset={a} edits={edits} />
          <TagEditor asset={a} edits={edits} />
          <DeleteZone asset={a} edits={edits} />
        </div>
      </div>
    </dialog>
  );
}

/** The changes the viewer offers, each run one at a time (`busy` while one runs). */
interface Edits {
  busy: boolean;
  rename: (name: string) => Promise<void>;
  tag: (tag: string) => Promise<void>;
  untag: (tag: string) => Promise<void>;
  remove: () => Promise<void>;
}

/** The picture at full size, the start of a text, or the type of a file the page cannot show. */
function AssetContent({ asset: a, apiKey }: { asset: Asset; apiKey: string }) {
  if (isPicture(a.mime_type)) return <AssetImage url={contentUrl(a.id)} apiKey={apiKey} alt={a.name} testId="full-image" />;
  if (isText(a.mime_type)) return <TextPreview id={a.id} apiKey={apiKey} />;
  return (
    <div class="file-icon big" data-testid="no-preview">
      <span>{a.mime_type}</span>
    </div>
  );
}

/** What the record says: size, type, hash, stored name, dates, id, metadata. */
function AssetFacts({ asset: a }: { asset: Asset }) {
  const stored = storedFileName(a);
  return (
    <dl class="facts" data-testid="asset-facts">
      <div class="fact-row">
        <dt>Size</dt>
        <dd>
          {formatBytes(a.size)}
          {a.size >= 1000 && ` (${a.size.toLocaleString("en")} bytes)`}
        </dd>
      </div>
      <div class="fact-row">
        <dt>Type</dt>
        <dd>{a.mime_type}</dd>
      </div>
      <div class="fact-row">
        <dt>Hash</dt>
        <dd>
          <code>{a.hash}</code>
        </dd>
      </div>
      {stored && (
        <div class="fact-row">
          <dt>Stored as</dt>
          <dd>
            <code>{stored}</code>
          </dd>
        </div>
      )}
      <div class="fact-row">
        <dt>Added</dt>
        <dd>{formatDate(a.created_at)}</dd>
      </div>
      <div class="fact-row">
        <dt>Id</dt>
        <dd>
          <code>{a.id}</code>
        </dd>
      </div>
      {Object.keys(a.user_metadata).length > 0 && (
        <div class="fact-row">
          <dt>Metadata</dt>
          <dd>
            <pre class="json small">{JSON.stringify(a.user_metadata, null, 2)}</pre>
          </dd>
        </div>
      )}
      {a.metadata && Object.keys(a.metadata).length > 0 && (
        <div class="fact-row">
          <dt>Service</dt>
          <dd>
            <pre class="json small">{JSON.stringify(a.metadata, null, 2)}</pre>
          </dd>
        </div>
      )}
    </dl>
  );
}

function RenameForm({ asset: a, edits }: { asset: Asset; edits: Edits }) {
  const [name, setName] = useState(a.name);
  useEffect(() => setName(a.name), [a.name]);
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void edits.rename(name.trim());
      }}
    >
      <label for="rename">Name</label>
      <div class="copy-row">
        <input id="rename" value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={512} />
        <button type="submit" disabled={edits.busy || name.trim() === a.name || !name.trim()}>
          Rename
        </button>
      </div>
    </form>
  );
}

function TagEditor({ asset: a, edits }: { asset: Asset; edits: Edits }) {
  const [newTag, setNewTag] = useState("");
  return (
    <div class="tag-editor">
      <p class="label">Tags</p>
      <ul class="plain chips" aria-label="Tags">
        {a.tags.map((t) => (
          <li key={t} class="chip editable" data-tag={t}>
            <span class="chip-text" title={t}>
              {t}
            </span>
            <button
              type="button"
              class="chip-remove"
              aria-label={`Remove tag ${t}`}
              disabled={edits.busy}
              onClick={() => void edits.untag(t)}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <form
        class="copy-row"
        onSubmit={(e) => {
          e.preventDefault();
          const t = newTag.trim();
          if (t) void edits.tag(t).then(() => setNewTag(""));
        }}
      >
        <input id="new-tag" aria-label="New tag" value={newTag} onInput={(e) => setNewTag(e.currentTarget.value)} placeholder="add a tag" />
        <button type="submit" disabled={edits.busy || !newTag.trim()}>
          Add tag
        </button>
      </form>
    </div>
  );
}

/** Delete, after a second, explicit confirmation. */
function DeleteZone({ asset: a, edits }: { asset: Asset; edits: Edits }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="danger-zone">
      {!confirming ? (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Delete…
        </button>
      ) : (
        <div role="alertdialog" aria-labelledby="confirm-h" class="confirm">
          <p id="confirm-h">
            <strong>Delete “{a.name}”?</strong> The record goes; the bytes stay while another record holds them.
          </p>
          <button type="button" class="danger" data-testid="confirm-delete" disabled={edits.busy} onClick={() => void edits.remove()}>
            Delete for good
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </div>
      )}
    </div>
  );
}

/** Tab from the last control comes back to the first (and Shift+Tab the other way): a modal dialog never lets focus out to the page's edge. */
function keepFocusInside(e: KeyboardEvent): void {
  if (e.key !== "Tab") return;
  const box = e.currentTarget as HTMLElement;
  const all = Array.from(
    box.querySelectorAll<HTMLElement>(
      "button:not([disabled]), a[href], input:not([disabled]), select, textarea, [tabindex]:not([tabindex='-1'])",
    ),
  );
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
      <pre class="text-preview" data-testid="text-preview">
        {text.text}
      </pre>
      {text.cut && <p class="muted small">The first 16 kB; download it for the rest.</p>}
    </>
  );
}
