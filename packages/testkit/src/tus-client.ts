import { Upload, type DetailedError } from "tus-js-client";

export interface TusOutcome {
  /** The upload's URL (absolute, as the client resolved Location). */
  url: string;
  /** `Asset-Id` of the response that completed it, or null when it stopped before. */
  assetId: string | null;
  /** Upload-Offset of every PATCH the client sent, in order. */
  patchOffsets: number[];
}

/**
 * tus-js-client as shipped (its Node HTTP stack): create at `endpoint` (or resume `uploadUrl`),
 * send `bytes` in `chunkSize` PATCHes, and resolve once done, or once `stopAfter` bytes are
 * accepted (the upload is then aborted, as a dropped connection leaves it). No retries, no
 * fingerprint store: each call is one attempt the test controls.
 */
export function tusUpload(
  bytes: Buffer,
  opts: { endpoint?: string; uploadUrl?: string; key: string; metadata?: Record<string, string>; chunkSize?: number; stopAfter?: number },
): Promise<TusOutcome> {
  return new Promise((resolve, reject) => {
    const patchOffsets: number[] = [];
    let assetId: string | null = null;
    let stopping = false;
    const upload: Upload = new Upload(bytes, {
      ...(opts.endpoint && { endpoint: opts.endpoint }),
      ...(opts.uploadUrl && { uploadUrl: opts.uploadUrl }),
      ...(opts.chunkSize && { chunkSize: opts.chunkSize }),
      headers: { "X-API-Key": opts.key },
      metadata: opts.metadata ?? {},
      retryDelays: null,
      storeFingerprintForResuming: false,
      onBeforeRequest(req) {
        if (req.getMethod() === "PATCH") patchOffsets.push(Number(req.getHeader("Upload-Offset")));
      },
      onAfterResponse(_req, res) {
        assetId = res.getHeader("Asset-Id") ?? assetId;
      },
      onChunkComplete(_size, accepted) {
        if (opts.stopAfter === undefined || accepted < opts.stopAfter || stopping) return;
        stopping = true;
        void upload.abort().then(() => resolve({ url: upload.url!, assetId, patchOffsets }), reject);
      },
      onSuccess() {
        if (!stopping) resolve({ url: upload.url!, assetId, patchOffsets });
      },
      onError: reject,
    });
    upload.start();
  });
}

/** The HTTP status and body tus-js-client reports for a refused request. */
export function refusal(err: unknown): { status: number; body: string } {
  const res = (err as DetailedError).originalResponse;
  return { status: res?.getStatus() ?? 0, body: res?.getBody() ?? String(err) };
}
