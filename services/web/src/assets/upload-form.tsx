import type { UploadResult } from "@app/contracts";
import { useRef, useState } from "preact/hooks";
import { isStored, uploadImage, type UploadFields } from "../api/assets.ts";
import { ApiError, describeError } from "../api/http.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { Progress } from "../ui/progress.tsx";
import { blake3OfFile } from "./content-hash.ts";
import { remember } from "./upload-history.ts";

export interface Uploaded {
  result: UploadResult;
  alreadyStored: boolean;
  file: File;
}

/** Pick or drop an image, set subfolder and type, watch it go up. */
export function UploadForm({ apiKey, onUploaded, onUnauthorized, defaultType = "input" }: { apiKey: string; onUploaded: (u: Uploaded) => void; onUnauthorized: () => void; defaultType?: string }) {
  const [fields, setFields] = useState<UploadFields>({ subfolder: "", type: defaultType });
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [error, setError] = useState<{ message: string; status: number } | null>(null);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const send = async (chosen: File) => {
    setError(null);
    setProgress({ sent: 0, total: chosen.size });
    try {
      // Asked before the upload: afterwards the answer is always yes. The upload still runs,
      // as it records this upload's type and subfolder.
      const storedBefore = await blake3OfFile(chosen).then((hex) => isStored(hex, apiKey), () => false);
      const result = await uploadImage(chosen, chosen.name, fields, apiKey, (sent, total) => setProgress({ sent, total: total || chosen.size }));
      const uploadedHere = remember({ ...result, kind: "image", fileName: chosen.name, at: new Date().toISOString() });
      const alreadyStored = storedBefore || uploadedHere;
      onUploaded({ result, alreadyStored, file: chosen });
    } catch (err) {
      setError({ message: describeError(err), status: err instanceof ApiError ? err.status : 0 });
    } finally {
      setProgress(null);
    }
  };
  const choose = (f: File | undefined) => {
    if (!f) return;
    setFile(f);
    void send(f);
  };

  return (
    <form class="card upload-form" onSubmit={(e) => { e.preventDefault(); if (file) void send(file); }}>
      <div
        class={`drop ${dragging ? "dragging" : ""}`}
        onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => { e.preventDefault(); setDragging(false); choose(e.dataTransfer?.files[0]); }}
      >
        <p>Drop an image here, or</p>
        <label class="button" for="image-file">Choose an image…</label>
        <input id="image-file" ref={input} class="visually-hidden" type="file" accept="image/*" onChange={(e) => choose(e.currentTarget.files?.[0])} />
        {file && <p class="muted">{file.name} · {(file.size / 1024).toFixed(1)} kB</p>}
      </div>
      <div class="fields">
        <label>
          Subfolder
          <input name="subfolder" value={fields.subfolder} onInput={(e) => setFields({ ...fields, subfolder: e.currentTarget.value })} placeholder="(none)" />
        </label>
        <label>
          Type
          <select name="type" value={fields.type} onChange={(e) => setFields({ ...fields, type: e.currentTarget.value })}>
            <option value="input">input</option>
            <option value="output">output</option>
            <option value="temp">temp</option>
          </select>
        </label>
        <button type="submit" disabled={!file || progress !== null}>Upload again</button>
      </div>
      {progress && <Progress label="Uploading" sent={progress.sent} total={progress.total} />}
      <ErrorBox message={error?.message ?? null}>
        {error?.status === 401 && <> <button type="button" class="link" onClick={onUnauthorized}>Enter another key</button></>}
      </ErrorBox>
    </form>
  );
}
