/**
 * An answer the API refused. `message` is the API's own words (`{error, message}` from search,
 * `{code, message, error}` from uploads), shown to the person as is.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The error a non-2xx answer carries, or a plain description when its body is not the API's shape. */
export function apiErrorFrom(status: number, bodyText: string): ApiError {
  try {
    const parsed = JSON.parse(bodyText) as { message?: unknown; code?: unknown; error?: unknown };
    // The asset API answers in ComfyUI's envelope, {error: {code, message, details}}.
    const body = typeof parsed.error === "object" && parsed.error !== null ? (parsed.error as typeof parsed) : parsed;
    if (typeof body.message === "string") {
      const code = typeof body.code === "string" ? body.code : typeof body.error === "string" ? body.error : undefined;
      return new ApiError(status, body.message, code);
    }
  } catch {
    // not JSON: a proxy's page, a cut connection
  }
  return new ApiError(status, `the server answered ${status}${bodyText ? `: ${bodyText.slice(0, 200)}` : ""}`);
}

export async function getJson<T>(url: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw apiErrorFrom(res.status, text);
  return JSON.parse(text) as T;
}

export const isAbort = (err: unknown): boolean => err instanceof DOMException && err.name === "AbortError";

export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return `the server could not be reached (${err.message})`;
  return err instanceof Error ? err.message : String(err);
}
