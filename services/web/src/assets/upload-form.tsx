import { useState } from "preact/hooks";
import { ErrorBox } from "../ui/error-box.tsx";
import { FileName } from "../ui/file-name.tsx";
import { formatBytes } from "../ui/format.ts";
import { Progress } from "../ui/progress.tsx";
import { DESTINATIONS, MODEL_TYPES, suggestChoice, tagsOf, type UploadChoice } from "./upload-settings.ts";
import { useUpload, type Uploaded, type UploadPhase } from "./use-upload.ts";

export type { Uploaded } from "./use-upload.ts";

/**
 * Choose any file, set where it goes (destination, model type, tags, name, subfolder), then
 * upload: resumable (tus, pause and resume) where the server has it, else one POST. Bytes the
 * store already holds (blake3, asked by hash first) are recorded without being sent again.
 */
export function UploadForm({
  apiKey,
  onUploaded,
  onUnauthorized,
  imagesOnly = false,
}: {
  apiKey: string;
  onUploaded: (u: Uploaded) => void;
  onUnauthorized: () => void;
  imagesOnly?: boolean;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [choice, setChoice] = useState<UploadChoice>(() => suggestChoice(""));
  const upload = useUpload(apiKey, onUploaded);
  const { phase, error } = upload;

  const choose = (f: File | undefined) => {
    if (!f) return;
    setFile(f);
    setChoice((c) => suggestChoice(f.name, c));
    upload.clearError();
  };
  const send = () => {
    if (!file || choice.name.trim() === "") return;
    void upload.send(file, { tags: tagsOf(choice), name: choice.name.trim(), subfolder: choice.subfolder });
  };

  const busy = phase.kind !== "idle";
  return (
    <form
      class="card upload-form"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <DropZone file={file} busy={busy} imagesOnly={imagesOnly} onChoose={choose} />
      <UploadFields choice={choice} busy={busy} onChange={(patch) => setChoice((c) => ({ ...c, ...patch }))} />
      <p class="muted small" data-testid="tags-preview">
        Tags: {tagsOf(choice).join(", ")}
      </p>
      <div class="toolbar">
        <button type="submit" class="primary" disabled={!file || busy}>
          Upload
        </button>
        <SendingControls
          phase={phase}
          pausable={upload.pausable}
          onPause={() => void upload.pause()}
          onResume={upload.resume}
          onCancel={() => void upload.cancel()}
        />
        <span class="muted small" data-testid="upload-mode">
          {upload.resumable === null
            ? ""
            : upload.resumable
              ? "Resumable upload (tus): it can be paused and resumed."
              : "One-request upload: this server has no resumable endpoint."}
        </span>
      </div>
      {phase.kind === "hashing" && (
        <p class="muted" aria-live="polite">
          Checking whether the store already has these bytes…
        </p>
      )}
      {phase.kind === "sending" && <Progress label={phase.paused ? "Paused at" : "Uploading"} sent={phase.sent} total={phase.total} />}
      <ErrorBox message={error?.message ?? null}>
        {error?.status === 401 && (
          <>
            {" "}
            <button type="button" class="link" onClick={onUnauthorized}>
              Enter another key
            </button>
          </>
        )}
      </ErrorBox>
    </form>
  );
}

/** Drop a file or choose one; says which was chosen. */
function DropZone({
  file,
  busy,
  imagesOnly,
  onChoose,
}: {
  file: File | null;
  busy: boolean;
  imagesOnly: boolean;
  onChoose: (f: File | undefined) => void;
}) {
  const [dragging, setDragging] = useState(false);
  return (
    <div
      class={`drop ${dragging ? "dragging" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        if (!busy) onChoose(e.dataTransfer?.files[0]);
      }}
    >
      <p>Drop a file here (an image, a model, any file), or</p>
      <label class="button" for="asset-file">
        Choose a file…
      </label>
      <input
        id="asset-file"
        class="visually-hidden"
        type="file"
        accept={imagesOnly ? "image/*" : undefined}
        disabled={busy}
        onChange={(e) => onChoose(e.currentTarget.files?.[0])}
      />
      {file && (
        <p class="chosen" data-testid="chosen">
          <FileName name={file.name} /> <span class="muted">{formatBytes(file.size)}</span>
        </p>
      )}
    </div>
  );
}

/** Where the upload goes and what it is called: destination, model type, name, subfolder, more tags. */
function UploadFields({
  choice,
  busy,
  onChange: set,
}: {
  choice: UploadChoice;
  busy: boolean;
  onChange: (patch: Partial<UploadChoice>) => void;
}) {
  return (
    <fieldset class="fields" disabled={busy}>
      <legend>Before it goes up</legend>
      <label>
        Destination
        <select
          id="destination"
          value={choice.destination}
          onChange={(e) => set({ destination: e.currentTarget.value as UploadChoice["destination"] })}
        >
          {DESTINATIONS.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
      </label>
      {choice.destination === "models" && (
        <label>
          Model type
          <input id="model-type" list="model-types" value={choice.modelType} onInput={(e) => set({ modelType: e.currentTarget.value })} />
          <datalist id="model-types">
            {MODEL_TYPES.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
      )}
      <label>
        Name
        <input
          id="asset-name"
          value={choice.name}
          onInput={(e) => set({ name: e.currentTarget.value })}
          placeholder="the file's name"
          required
        />
      </label>
      <label>
        Subfolder
        <input id="subfolder" value={choice.subfolder} onInput={(e) => set({ subfolder: e.currentTarget.value })} placeholder="none" />
      </label>
      <label>
        More tags
        <input
          id="extra-tags"
          value={choice.extraTags}
          onInput={(e) => set({ extraTags: e.currentTarget.value })}
          placeholder="comma-separated"
        />
      </label>
    </fieldset>
  );
}

/** While bytes go up: pause or resume (resumable uploads only), and cancel. */
function SendingControls({
  phase,
  pausable,
  onPause,
  onResume,
  onCancel,
}: {
  phase: UploadPhase;
  pausable: boolean;
  onPause: () => void;
  onResume: () => void;
  onCancel: () => void;
}) {
  if (phase.kind !== "sending") return null;
  return (
    <>
      {pausable &&
        (phase.paused ? (
          <button type="button" onClick={onResume}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={onPause}>
            Pause
          </button>
        ))}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </>
  );
}
