import { Readable, Transform } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";

/** Upstream could not give the archive: unreachable, timed out, or an answer other than 200. */
export class UpstreamArchiveError extends Error {
  constructor(
    message: string,
    /** The status upstream answered, when it answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface UpstreamArchive {
  body: Readable;
  /** Content-Length as upstream sent it, when it did. */
  size?: number;
}

/**
 * GET an archive from upstream's storage. The answer must start within `timeoutMs` (connecting
 * included), and the body may not stall for longer than that between two chunks: a fetch never
 * hangs, whatever upstream does.
 */
export async function fetchUpstreamArchive(url: string, timeoutMs: number, signal?: AbortSignal): Promise<UpstreamArchive> {
  const abort = new AbortController();
  const stop = (reason: unknown) => abort.abort(reason);
  signal?.addEventListener("abort", () => stop(signal.reason), { once: true });
  let timer = setTimeout(() => stop(new UpstreamArchiveError(`no answer from ${hostOf(url)} within ${timeoutMs} ms`)), timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { signal: abort.signal, redirect: "follow" });
  } catch (err) {
    clearTimeout(timer);
    const reason: unknown = abort.signal.aborted ? abort.signal.reason : err;
    throw reason instanceof UpstreamArchiveError
      ? reason
      : new UpstreamArchiveError(`${hostOf(url)} could not be reached: ${describe(reason)}`);
  }
  if (res.status !== 200 || !res.body) {
    clearTimeout(timer);
    await res.body?.cancel().catch(() => undefined);
    throw new UpstreamArchiveError(`${hostOf(url)} answered ${res.status}`, res.status);
  }
  const length = Number(res.headers.get("content-length"));
  const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  // From here the timer means "no byte for timeoutMs": each chunk starts it again.
  const idle = new Transform({
    transform(chunk, _enc, done) {
      clearTimeout(timer);
      timer = setTimeout(() => idle.destroy(new UpstreamArchiveError(`${hostOf(url)} stalled for ${timeoutMs} ms mid-archive`)), timeoutMs);
      done(null, chunk);
    },
    flush(done) {
      clearTimeout(timer);
      done();
    },
  });
  clearTimeout(timer);
  timer = setTimeout(() => idle.destroy(new UpstreamArchiveError(`${hostOf(url)} stalled for ${timeoutMs} ms mid-archive`)), timeoutMs);
  idle.on("close", () => clearTimeout(timer));
  body.on("error", (err) =>
    idle.destroy(
      err instanceof UpstreamArchiveError ? err : new UpstreamArchiveError(`${hostOf(url)} broke off mid-archive: ${describe(err)}`),
    ),
  );
  idle.on("error", () => body.destroy());
  body.pipe(idle);
  return { body: idle, size: Number.isInteger(length) && length >= 0 && res.headers.has("content-length") ? length : undefined };
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "upstream";
  }
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  return err instanceof Error ? err.message : String(err);
}
