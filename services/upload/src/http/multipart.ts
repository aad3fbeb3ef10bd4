import type { Readable } from "node:stream";
import { Busboy, type BusboyInstance } from "@fastify/busboy";
import type { Request } from "express";
import { metrics } from "@app/platform";
import type { BlobStore, StagedBlob } from "@app/blobs";
import { ApiFailure } from "../domain/errors.ts";
import { UNLIMITED_BYTES, type ByteBudget } from "./byte-budget.ts";

export interface MultipartLimits {
  maxBytes: number;
  bodyTimeoutMs: number;
}

/** How a route reads its multipart body (the upload routes' defaults: an `image` part, the timeout over the whole body). */
export interface MultipartOptions {
  /** The name of the one file part. */
  fileField?: string;
  /**
   * The timeout counts from the last byte received, not from the start: a model file of
   * gigabytes takes minutes, and only a stalled client is cut off.
   */
  idleTimeout?: boolean;
  /**
   * Asked when the file part starts, with the fields sent before it: "drain" reads the part to
   * its end without storing a byte (the asset API's known-hash shortcut).
   */
  beforeFile?: (fields: Map<string, string>) => Promise<"stage" | "drain">;
}

export interface ParsedUpload {
  /** Each text field's first value. */
  fields: Map<string, string>;
  /** Every value of each text field, in order (a field may be repeated, as `tags` is). */
  lists: Map<string, string[]>;
  /** The staged file part (an image, or any file the asset API takes), or null when there was none (or it was drained). The caller commits or discards it. */
  file: StagedBlob | null;
  /** A file part was sent (staged or drained). */
  filePresent: boolean;
  /** The file part's filename as the client sent it (a display name only: never a path here). */
  fileName: string | null;
  /** The file's first bytes, for format probes on stores without a local file. */
  head: Buffer;
}

/** How much of a file the content probes see. */
export const HEAD_BYTES = 1024 * 1024;
const FIELD_MAX = 64 * 1024;

/** Keeps the first bytes of the file (seen through the store's chunk hook: no extra stream hop) and counts what flows. */
class HeadCapture {
  private chunks: Buffer[] = [];
  private kept = 0;

  readonly onData = (chunk: Buffer): void => {
    if (this.kept < HEAD_BYTES) {
      const part = chunk.subarray(0, HEAD_BYTES - this.kept);
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
    metrics.uploadBytes.inc(chunk.length);
  };

  head(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/**
 * Stream a multipart body: the `image` file part goes straight into a staged blob (hashed as it
 * arrives), small text fields are collected. Any failure (limit, malformed body, client gone,
 * timeout) destroys the part stream, so the temporary is removed before this rejects. The key's
 * byte budget is charged before a byte is read (Content-Length), or ahead of the bytes as they
 * stream (no Content-Length); the share of a body that never arrives is given back.
 */
export async function parseMultipart(
  req: Request,
  store: BlobStore,
  limits: MultipartLimits,
  budget: ByteBudget = UNLIMITED_BYTES,
  options: MultipartOptions = {},
): Promise<ParsedUpload> {
  const declared = Number(req.headers["content-length"]);
  const hasLength = req.headers["content-length"] !== undefined && Number.isFinite(declared);
  if (hasLength && declared > limits.maxBytes) throw tooLarge(limits.maxBytes);

  const type = req.headers["content-type"] ?? "";
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new ApiFailure("malformed_multipart", `the body must be multipart/form-data with a boundary (got '${type.slice(0, 100) || "no Content-Type"}')`);
  }
  let bb: BusboyInstance;
  try {
    bb = new Busboy({
      headers: { ...req.headers, "content-type": type },
      limits: { fileSize: limits.maxBytes, files: 1, fields: 16, fieldSize: FIELD_MAX, parts: 32, headerPairs: 16 },
    });
  } catch (err) {
    throw new ApiFailure("malformed_multipart", `not a multipart/form-data body: ${(err as Error).message}`);
  }
  // Nothing reads the body while this waits: it stays in the socket, not in memory.
  if (hasLength) await budget.charge(declared);
  if (req.destroyed) {
    budget.settle(0);
    throw new ApiFailure("malformed_multipart", "the client closed the connection before the body ended");
  }
  return streamParts(req, bb, store, limits, budget, hasLength, options);
}

function streamParts(
  req: Request,
  bb: BusboyInstance,
  store: BlobStore,
  limits: MultipartLimits,
  budget: ByteBudget,
  hasLength: boolean,
  options: MultipartOptions,
): Promise<ParsedUpload> {
  const fileField = options.fileField ?? "image";
  return new Promise((resolve, reject) => {
    const fields = new Map<string, string>();
    const lists = new Map<string, string[]>();
    let filePresent = false;
    let fileName: string | null = null;
    let draining: Promise<void> | null = null;
    let staging: Promise<StagedBlob> | null = null;
    let fileStream: Readable | null = null;
    let capture: HeadCapture | null = null;
    let received = 0;
    let settled = false;

    const timer = setTimeout(() => {
      budget.settle(received);
      fail(new ApiFailure("request_timeout", `the request body did not arrive within ${limits.bodyTimeoutMs} ms`));
    }, limits.bodyTimeoutMs);

    const cleanup = () => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("aborted", onAborted);
      req.off("close", onClose);
    };

    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      req.unpipe(bb);
      fileStream?.destroy(err);
      void (async () => {
        if (staging) {
          const staged = await staging.catch(() => null);
          await staged?.discard();
        }
        reject(err);
      })();
    };

    const onData = (chunk: Buffer) => {
      if (options.idleTimeout) timer.refresh();
      received += chunk.length;
      if (received > limits.maxBytes) return fail(tooLarge(limits.maxBytes));
      if (!hasLength) budget.chargeAhead(received)?.catch((err: Error) => fail(err));
    };
    const onAborted = () => {
      budget.settle(received);
      fail(new ApiFailure("malformed_multipart", "the client closed the connection before the body ended"));
    };
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    req.on("data", onData);
    req.on("aborted", onAborted);
    req.on("close", onClose);

    const stage = (stream: Readable) => {
      capture = new HeadCapture();
      staging = store.stage(stream, { onChunk: capture.onData });
      staging.catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
    };
    const drain = (stream: Readable) =>
      new Promise<void>((done) => {
        stream.on("end", done);
        stream.on("error", () => done());
        // resume() lets the part flow (and its bytes go) even when it was paused explicitly while the route decided.
        stream.resume();
      });

    bb.on("file", (name, stream, filename) => {
      // After a failure busboy still parses what it was already given: nothing may be staged then.
      if (settled || name !== fileField || filePresent) {
        // A body that ends early errors this ignored part too; unheard, that error would kill the process.
        stream.on("error", () => undefined);
        stream.resume();
        return;
      }
      filePresent = true;
      fileName = typeof filename === "string" ? filename : null;
      fileStream = stream;
      // fail() destroys the part with its reason: heard here even before a consumer is attached (every failure is answered through fail()).
      stream.on("error", () => undefined);
      stream.on("limit", () => fail(tooLarge(limits.maxBytes)));
      if (!options.beforeFile) return stage(stream);
      // The part waits in busboy (and the body in the socket) while the route decides.
      stream.pause();
      draining = options.beforeFile(fields).then(
        (choice) => {
          if (settled) return;
          // Either consumer resumes the part when it starts reading (the store's pipe does so only once its file is open).
          if (choice === "drain") return drain(stream);
          stage(stream);
        },
        (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
      );
    });
    bb.on("field", (name, value, nameTruncated, valueTruncated) => {
      if (nameTruncated) return fail(new ApiFailure("malformed_multipart", "a part name is too long"));
      if (valueTruncated) {
        return fail(new ApiFailure("malformed_multipart", `field '${name.slice(0, 64)}' is longer than ${FIELD_MAX} bytes`));
      }
      if (!fields.has(name)) fields.set(name, value);
      lists.set(name, [...(lists.get(name) ?? []), value]);
    });
    bb.on("partsLimit", () => fail(new ApiFailure("malformed_multipart", "too many parts (at most 32)")));
    bb.on("filesLimit", () => fail(new ApiFailure("malformed_multipart", `too many file parts (one '${fileField}' part is accepted)`)));
    bb.on("fieldsLimit", () => fail(new ApiFailure("malformed_multipart", "too many fields (at most 16)")));
    bb.on("error", (err: Error) => fail(new ApiFailure("malformed_multipart", `malformed multipart body: ${err.message}`)));
    bb.on("finish", () => {
      if (settled) return;
      void (async () => {
        let file: StagedBlob | null;
        try {
          await draining;
          file = staging ? await staging : null;
        } catch {
          return; // fail() has answered
        }
        if (settled) {
          await file?.discard();
          return;
        }
        settled = true;
        cleanup();
        // A streamed body was charged a step ahead of its bytes.
        if (!hasLength) budget.settle(received);
        resolve({ fields, lists, file, filePresent, fileName, head: capture?.head() ?? Buffer.alloc(0) });
      })();
    });

    req.pipe(bb);
  });
}

function tooLarge(max: number): ApiFailure {
  return new ApiFailure("payload_too_large", `the request body is larger than UPLOAD_MAX_BYTES (${max} bytes)`);
}
