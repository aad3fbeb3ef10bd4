import type { Asset } from "@app/contracts";
import { useEffect, useRef, useState } from "preact/hooks";
import { getAsset, isStored, uploadAssetForm } from "../api/assets.ts";
import { ApiError, describeError, isAbort } from "../api/http.ts";
import { hasResumableUploads, resumableUpload, type ResumableUpload } from "../api/resumable.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { FileName } from "../ui/file-name.tsx";
import { formatBytes } from "../ui/format.ts";
import { Progress } from "../ui/progress.tsx";
import { blake3OfFile } from "./content-hash.ts";
import { DESTINATIONS, MODEL_TYPES, suggestChoice, tagsOf, type UploadChoice } from "./upload-settings.ts";

export interface Uploaded {
  asset: Asset;
  /** The bytes were in the store before this upload (only a record was added). */
  alreadyStored: boolean;
  /** How they went up: the resumable (tus) endpoint, the one-request form, or not at all (known bytes). */
  via: "resumable" | "form" | "known";
  file: File;
}

type Phase = { kind: "idle" } | { kind: "hashing" } | { kind: "sending"; sent: number; total: number; paused: boolean };

/**
 * Choose any file, set where it goes (destination, model type, tags, name, subfolder), then
 * upload: resumable (tus, pause and resume) where the server has it, else one POST. Bytes the
 * store already holds (blake3, asked by hash first) are recorded without being sent again.
 */
export function UploadForm({ apiKey, onUploaded, onUnauthorized, imagesOnly = false }: { apiKey: string; onUploaded: (u: Uploaded) => void; onUnauthorized: () => void; imagesOnly?: boolean }) {
  const [file, setFile] = useState<File | null>(null);
  const [choice, setChoice] = useState<UploadChoice>(() => suggestChoice(""));
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const [error, setError] = useState<{ message: string; status: number } | null>(null);
  const [dragging, setDragging] = useState(false);
  const [resumable, setResumable] = useState<boolean | null>(null);
  const current = useRef<ResumableUpload | null>(null);
  const formUpload = useRef<AbortController | null>(null);

  useEffect(() => {
    void hasResumableUploads(apiKey).then(setResumable);
    return () => {
      void current.current?.pause();
      formUpload.current?.abort();
    };
  }, [apiKey]);

  const choose = (f: File | undefined) => {
    if (!f) return;
    setFile(f);
    setChoice((c) => suggestChoice(f.name, c));
    setError(null);
  };
  const fail = (err: unknown) => {
    current.current = null;
    setPhase({ kind: "idle" });
    if (!isAbort(err)) setError({ message: describeError(err), status: err instanceof ApiError ? err.status : 0 });
  };
  const finish = async (assetOrId: Asset | string, alreadyStored: boolean, via: Uploaded["via"], f: File) => {
    current.current = null;
    try {
      const asset = typeof assetOrId === "string" ? await getAsset(assetOrId, apiKey) : assetOrId;
      setPhase({ kind: "idle" });
      onUploaded({ asset, alreadyStored, via, file: f });
    } catch (err) {
      fail(err);
    }
  };

  const send = async () => {
    if (!file || choice.name.trim() === "") return;
    const f = file;
    const settings = { tags: tagsOf(choice), name: choice.name.trim(), subfolder: choice.subfolder };
    setError(null);
    setPhase({ kind: "hashing" });
    try {
      const hash = `blake3:${await blake3OfFile(f)}`;
      if (await isStored(hash.slice("blake3:".length), apiKey)) {
        const created = await uploadAssetForm(null, settings, apiKey, { hash });
        return void (await finish(created, true, "known", f));
      }
      setPhase({ kind: "sending", sent: 0, total: f.size, paused: false });
      if (resumable ?? (await hasResumableUploads(apiKey))) {
        const upload = resumableUpload(f, settings, apiKey, {
          onProgress: (sent, total) => setPhase((p) => ({ kind: "sending", sent, total, paused: p.kind === "sending" && p.paused })),
          onDone: (id) => void finish(id, false, "resumable", f),
          onError: fail,
        }, hash);
        current.current = upload;
        upload.start();
      } else {
        formUpload.current = new AbortController();
        const created = await uploadAssetForm(f, settings, apiKey, { onProgress: (sent, total) => setPhase({ kind: "sending", sent, total: total || f.size, paused: false }), signal: formUpload.current.signal });
        await finish(created, !created.created_new, "form", f);
      }
    } catch (err) {
      fail(err);
    }
  };
  const pause = async () => {
    if (!current.current) return;
    await current.current.pause();
    setPhase((p) => (p.kind === "sending" ? { ...p, paused: true } : p));
  };
  const resume = () => {
    setPhase((p) => (p.kind === "sending" ? { ...p, paused: false } : p));
    current.current?.start();
  };
  const cancel = async () => {
    formUpload.current?.abort();
    await current.current?.cancel();
    current.current = null;
    setPhase({ kind: "idle" });
  };

  const busy = phase.kind !== "idle";
  const set = (patch: Partial<UploadChoice>) => setChoice((c) => ({ ...c, ...patch }));
  return (
    <form class="card upload-form" onSubmit={(e) => { e.preventDefault(); void send(); }}>
      <div
        class={`drop ${dragging ? "dragging" : ""}`}
        onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => { e.preventDefault(); setDragging(false); if (!busy) choose(e.dataTransfer?.files[0]); }}
      >
        <p>Drop a file here (an image, a model, any file), or</p>
        <label class="button" for="asset-file">Choose a file…</label>
        <input id="asset-file" class="visually-hidden" type="file" accept={imagesOnly ? "image/*" : undefined} disabled={busy} onChange={(e) => choose(e.currentTarget.files?.[0])} />
        {file && <p class="chosen" data-testid="chosen"><FileName name={file.name} /> <span class="muted">{formatBytes(file.size)}</span></p>}
      </div>
      <fieldset class="fields" disabled={busy}>
        <legend>Before it goes up</legend>
        <label>
          Destination
          <select id="destination" value={choice.destination} onChange={(e) => set({ destination: e.currentTarget.value as UploadChoice["destination"] })}>
            {DESTINATIONS.map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </label>
        {choice.destination === "models" && (
          <label>
            Model type
            <input id="model-type" list="model-types" value={choice.modelType} onInput={(e) => set({ modelType: e.currentTarget.value })} />
            <datalist id="model-types">{MODEL_TYPES.map((t) => <option key={t} value={t} />)}</datalist>
          </label>
        )}
        <label>
          Name
          <input id="asset-name" value={choice.name} onInput={(e) => set({ name: e.currentTarget.value })} placeholder="the file's name" required />
        </label>
        <label>
          Subfolder
          <input id="subfolder" value={choice.subfolder} onInput={(e) => set({ subfolder: e.currentTarget.value })} placeholder="none" />
        </label>
        <label>
          More tags
          <input id="extra-tags" value={choice.extraTags} onInput={(e) => set({ extraTags: e.currentTarget.value })} placeholder="comma-separated" />
        </label>
      </fieldset>
      <p class="muted small" data-testid="tags-preview">Tags: {tagsOf(choice).join(", ")}</p>
      <div class="toolbar">
        <button type="submit" class="primary" disabled={!file || busy}>Upload</button>
        {phase.kind === "sending" && current.current && (phase.paused
          ? <button type="button" onClick={resume}>Resume</button>
          : <button type="button" onClick={() => void pause()}>Pause</button>)}
        {phase.kind === "sending" && <button type="button" onClick={() => void cancel()}>Cancel</button>}
        <span class="muted small" data-testid="upload-mode">{resumable === null ? "" : resumable ? "Resumable upload (tus): it can be paused and resumed." : "One-request upload: this server has no resumable endpoint."}</span>
      </div>
      {phase.kind === "hashing" && <p class="muted" aria-live="polite">Checking whether the store already has these bytes…</p>}
      {phase.kind === "sending" && <Progress label={phase.paused ? "Paused at" : "Uploading"} sent={phase.sent} total={phase.total} />}
      <ErrorBox message={error?.message ?? null}>
        {error?.status === 401 && <> <button type="button" class="link" onClick={onUnauthorized}>Enter another key</button></>}
      </ErrorBox>
    </form>
  );
}
