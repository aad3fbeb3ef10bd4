import { useEffect, useRef, useState } from "preact/hooks";
import { fetchBlob } from "../api/assets.ts";
import { describeError, isAbort } from "../api/http.ts";

/**
 * An image behind the API key: fetched with the header, shown from a blob URL revoked when it
 * goes. `lazy` waits until the image is near the viewport (a gallery of hundreds fetches only
 * what is looked at).
 */
export function AssetImage({
  url,
  apiKey,
  alt,
  testId,
  lazy = false,
  onLoad,
}: {
  url: string;
  apiKey: string;
  alt: string;
  testId?: string;
  lazy?: boolean;
  onLoad?: (img: HTMLImageElement) => void;
}) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [visible, setVisible] = useState(!lazy);
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (visible || !holder.current) return;
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setVisible(true);
      },
      { rootMargin: "400px" },
    );
    seen.observe(holder.current);
    return () => seen.disconnect();
  }, [visible]);
  useEffect(() => {
    if (!visible) return;
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
  }, [url, apiKey, visible]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!src)
    return (
      <div ref={holder} class="img-placeholder" aria-busy="true">
        Loading…
      </div>
    );
  return <img src={src} alt={alt} data-testid={testId} onLoad={(e) => onLoad?.(e.currentTarget)} />;
}
