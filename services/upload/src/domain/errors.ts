import type { AssetError, UploadErrorCode } from "@app/contracts";

const STATUS: Record<UploadErrorCode, number> = {
  unauthorized: 401,
  missing_image: 400,
  invalid_image: 400,
  image_too_large: 400,
  payload_too_large: 413,
  invalid_subfolder: 400,
  invalid_type: 400,
  malformed_multipart: 400,
  invalid_original_ref: 400,
  original_not_found: 404,
  not_found: 404,
  invalid_hash: 400,
  invalid_json: 400,
  invalid_body: 400,
  invalid_query: 400,
  invalid_cursor: 400,
  asset_not_found: 404,
  invalid_tag_filter: 400,
  empty_upload: 400,
  missing_file: 400,
  unsupported_media_type: 415,
  hash_mismatch: 400,
  not_supported: 501,
  invalid_range: 416,
  request_timeout: 408,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

/** A failure the client is told about: a stable code, its HTTP status, and a message naming the input. */
export class ApiFailure extends Error {
  readonly status: number;
  /** Sent as `Retry-After` (429: when the key's window ends). */
  readonly retryAfterSeconds: number | undefined;
  /** More about what was wrong (the asset routes answer it as `error.details`). */
  readonly details: Record<string, unknown>;
  constructor(
    readonly code: UploadErrorCode,
    message: string,
    opts: { retryAfterMs?: number; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.status = STATUS[code];
    this.details = opts.details ?? {};
    if (opts.retryAfterMs !== undefined) this.retryAfterSeconds = Math.max(1, Math.ceil(opts.retryAfterMs / 1000));
  }
}

export function errorBody(code: UploadErrorCode, message: string): { code: UploadErrorCode; message: string; error: UploadErrorCode } {
  return { code, message, error: code };
}

/** The same failure in ComfyUI's asset API envelope: `{error: {code: "ASSET_NOT_FOUND", message, details}}`. */
export function assetErrorBody(failure: ApiFailure): AssetError {
  return { error: { code: failure.code.toUpperCase(), message: failure.message, details: failure.details } };
}

/** 429: the key's allowance for this minute is spent; Retry-After says when its window ends. */
export function rateLimited(retryAfterMs: number, why: string): ApiFailure {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiFailure("rate_limited", `${why}; retry after ${seconds} s`, { retryAfterMs });
}
