import { DetailedError, Upload } from "tus-js-client";
import { uploadMetadata, type AssetUploadSettings } from "./assets.ts";
import { ApiError, apiErrorFrom } from "./http.ts";

/** The asset API's tus 1.0.0 endpoint (creation: POST; each chunk: PATCH; where it stands: HEAD). */
export const TUS_ENDPOINT = "/api/assets/uploads";
const CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * Whether this server takes resumable uploads: a tus server answers OPTIONS with `Tus-Version`
 * (tus 1.0.0). A server without the endpoint answers 404 or 405, or (Express's automatic
 * OPTIONS for `/api/assets/:id`) an Allow list with no tus header: then the page falls back to
 * POST /api/assets.
 */
export async function hasResumableUploads(key: string): Promise<boolean> {
  try {
    const res = await fetch(TUS_ENDPOINT, { method: "OPTIONS", headers: { "X-API-Key": key, "Tus-Resumable": "1.0.0" } });
    await res.body?.cancel();
    return res.ok && res.headers.has("Tus-Version");
  } catch {
    return false;
  }
}

export interface ResumableHandlers {
  onProgress(sent: number, total: number): void;
  /** The upload is complete: the asset the completing PATCH (or a later HEAD) named in `Asset-Id`. */
  onDone(assetId: string): void;
  onError(err: Error): void;
}

export interface ResumableUpload {
  start(): void;
  /** Stops sending; the bytes the server has are kept there, and `start` carries on from them. */
  pause(): Promise<void>;
  /** Stops and asks the server to drop what it has. */
  cancel(): Promise<void>;
}

/** The tus client's refusal in the API's own words (its body is the asset API's error envelope). */
function asApiError(err: Error): Error {
  const res = err instanceof DetailedError ? err.originalResponse : null;
  if (!res || res.getStatus() === 0) return err;
  return apiErrorFrom(res.getStatus(), res.getBody() ?? "");
}

export function resumableUpload(
  file: File,
  settings: AssetUploadSettings,
  key: string,
  handlers: ResumableHandlers,
  hash?: string,
): ResumableUpload {
  let assetId: string | null = null;
  const metadata: Record<string, string> = {
    filename: settings.name,
    tags: settings.tags.join(","),
    user_metadata: JSON.stringify(uploadMetadata(settings)),
  };
  if (file.type) metadata.mime_type = file.type;
  if (hash) metadata.hash = hash;
  const upload = new Upload(file, {
    endpoint: TUS_ENDPOINT,
    headers: { "X-API-Key": key },
    metadata,
    chunkSize: CHUNK_BYTES,
    retryDelays: [0, 1000, 3000],
    // A retry of a refusal (400, 401, 413) would only be refused again.
    onShouldRetry: (err) => {
      const status = err.originalResponse?.getStatus() ?? 0;
      return status === 0 || status === 409 || status === 423 || status >= 500;
    },
    storeFingerprintForResuming: false,
    onProgress: handlers.onProgress,
    onAfterResponse: (_req, res) => {
      const id = res.getHeader("Asset-Id");
      if (id) assetId = id;
    },
    onSuccess: () => {
      if (assetId) handlers.onDone(assetId);
      else handlers.onError(new ApiError(0, "the server finished the upload without naming its asset (no Asset-Id header)"));
    },
    onError: (err) => handlers.onError(asApiError(err)),
  });
  return {
    start: () => upload.start(),
    pause: () => upload.abort(false),
    cancel: () => upload.abort(true).catch(() => undefined),
  };
}
