import { useEffect, useState } from "preact/hooks";
import { fetchBlob } from "../api/assets.ts";
import { describeError, isAbort } from "../api/http.ts";

/** An image behind the API key: fetched with the header, shown from a blob URL revoked when it goes. */
export function AssetImage({ url, apiKey, alt, testId, onLoad }: { url: string; apiKey: string; alt: string; testId?: string; onLoad?: (img: HTMLImageElement) => void }) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    let objectUrl: string | null = null;
    setSrc(null);
    setError(null);
    fetchBlob(url, apiKey, ctrl.signal).then(
      (blob) => {
        objectUrl = URL.createObjectURL(blob);
        setSrc(objectUrl);
      },
      (err: unknown) => {
        if (!isAbort(err)) setError(describeError(err));
      },
    );
    return () => {
      ctrl.abort();
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [url, apiKey]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!src) return <div class="img-placeholder" aria-busy="true">Loading…</div>;
  return <img src={src} alt={alt} data-testid={testId} onLoad={(e) => onLoad?.(e.currentTarget)} />;
}
