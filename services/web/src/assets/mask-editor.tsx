import type { MaskUploadResult } from "@app/contracts";
import { useEffect, useRef, useState } from "preact/hooks";
import { fetchBlob, uploadMask, viewUrl } from "../api/assets.ts";
import { ApiError, describeError, isAbort } from "../api/http.ts";
import { AssetImage } from "../ui/asset-image.tsx";
import { ErrorBox } from "../ui/error-box.tsx";
import { Progress } from "../ui/progress.tsx";
import { clearCanvas, exportMask, MaskCanvas, type Tool } from "./mask-canvas.tsx";
import type { MaskOriginal } from "./mask-original.ts";

interface Loaded {
  src: string;
  width: number;
  height: number;
}

type Failure = { message: string; status: number };
const failureOf = (err: unknown): Failure => ({ message: describeError(err), status: err instanceof ApiError ? err.status : 0 });

/** Paint a mask over a stored image, upload it with `original_ref`, see mask, paint and painted. */
export function MaskEditor({ original, apiKey, onUnauthorized }: { original: MaskOriginal; apiKey: string; onUnauthorized: () => void }) {
  const { image, loadError } = useDecodedImage(original.source, apiKey);
  const [tool, setTool] = useState<Tool>("brush");
  const [size, setSize] = useState(24);
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [error, setError] = useState<Failure | null>(null);
  const [result, setResult] = useState<MaskUploadResult | null>(null);
  const brush = useRef<HTMLCanvasElement | null>(null);
  useToolKeys(setTool, setSize);

  // Reports its own failures (setError), so a click need not wait for it.
  const send = async () => {
    if (!brush.current) return;
    setError(null);
    setResult(null);
    try {
      const mask = await exportMask(brush.current);
      setProgress({ sent: 0, total: mask.size });
      const res = await uploadMask(mask, original.ref, { subfolder: original.subfolder, type: "input" }, apiKey, (sent, total) =>
        setProgress({ sent, total: total || mask.size }),
      );
      setResult(res);
    } catch (err) {
      setError(failureOf(err));
    } finally {
      setProgress(null);
    }
  };

  const failure = loadError ?? error;
  return (
    <div class="mask-editor">
      <ErrorBox message={failure?.message ?? null}>
        {failure?.status === 401 && (
          <>
            {" "}
            <button type="button" class="link" onClick={onUnauthorized}>
              Enter another key
            </button>
          </>
        )}
      </ErrorBox>
      {!image && !loadError && <p>Loading {original.label}…</p>}
      {image && (
        <>
          <div class="toolbar" role="toolbar" aria-label="Brush">
            <button type="button" aria-pressed={tool === "brush"} aria-keyshortcuts="B" title="Brush (B)" onClick={() => setTool("brush")}>
              Brush
            </button>
            <button
              type="button"
              aria-pressed={tool === "eraser"}
              aria-keyshortcuts="E"
              title="Eraser (E)"
              onClick={() => setTool("eraser")}
            >
              Eraser
            </button>
            <label class="size" title="Brush size ([ and ])">
              Size{" "}
              <input
                type="range"
                aria-keyshortcuts="[ ]"
                min={2}
                max={120}
                value={size}
                onInput={(e) => setSize(Number(e.currentTarget.value))}
              />{" "}
              <output>{size}px</output>
            </label>
            <button type="button" onClick={() => brush.current && clearCanvas(brush.current)}>
              Clear
            </button>
            <button type="button" class="primary" onClick={() => void send()} disabled={progress !== null}>
              Upload mask
            </button>
          </div>
          <MaskCanvas
            src={image.src}
            width={image.width}
            height={image.height}
            tool={tool}
            size={size}
            onReady={(c) => (brush.current = c)}
          />
          <p class="muted">
            Painted areas become transparent in the result ({image.width}×{image.height} px).
          </p>
        </>
      )}
      {progress && <Progress label="Uploading the mask" sent={progress.sent} total={progress.total} />}
      {result && <MaskResult result={result} apiKey={apiKey} />}
    </div>
  );
}

/** The image at `source`, fetched with the key and decoded (its object URL revoked when it changes). */
function useDecodedImage(source: string, apiKey: string): { image: Loaded | null; loadError: Failure | null } {
  const [image, setImage] = useState<Loaded | null>(null);
  const [loadError, setLoadError] = useState<Failure | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    let url: string | null = null;
    setImage(null);
    setLoadError(null);
    fetchBlob(source, apiKey, ctrl.signal)
      .then(async (blob) => {
        url = URL.createObjectURL(blob);
        const img = new Image();
        img.src = url;
        await img.decode();
        setImage({ src: url, width: img.naturalWidth, height: img.naturalHeight });
      })
      .catch((err: unknown) => {
        if (!isAbort(err)) setLoadError(failureOf(err));
      });
    return () => {
      ctrl.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [source, apiKey]);
  return { image, loadError };
}

/** Keys for the tools (the buttons say which): B brush, E eraser, [ and ] size; not while typing in a field. */
function useToolKeys(setTool: (t: Tool) => void, setSize: (change: (s: number) => number) => void): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (e.ctrlKey || e.metaKey || e.altKey || target?.closest("input, select, textarea")) return;
      if (e.key === "b") setTool("brush");
      else if (e.key === "e") setTool("eraser");
      else if (e.key === "[") setSize((s) => Math.max(2, s - 4));
      else if (e.key === "]") setSize((s) => Math.min(120, s + 4));
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}

/** What /upload/mask made: the mask, the paint and the painted image, side by side. */
function MaskResult({ result, apiKey }: { result: MaskUploadResult; apiKey: string }) {
  const files = result.metadata.related_files;
  return (
    <section class="mask-result" aria-labelledby="mask-result-h" aria-live="polite">
      <h2 id="mask-result-h">Result · mask type {result.metadata.mask_type}</h2>
      <div class="side-by-side">
        <Figure caption="Mask" name={files.mask} apiKey={apiKey} testId="mask" />
        <Figure caption="Paint" name={files.paint} apiKey={apiKey} testId="paint" />
        <Figure caption="Painted" name={files.painted} apiKey={apiKey} testId="painted" />
      </div>
    </section>
  );
}

function Figure({ caption, name, apiKey, testId }: { caption: string; name: string; apiKey: string; testId: string }) {
  return (
    <figure class="checker">
      <AssetImage url={viewUrl(name)} apiKey={apiKey} alt={`${caption}: ${name}`} testId={testId} />
      <figcaption>
        {caption} <code title={name}>{name.slice(0, 10)}…</code>
      </figcaption>
    </figure>
  );
}
