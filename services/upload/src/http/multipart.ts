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
  /** The most text fields the form may hold (default 16); parts may number 16 more. */
  maxFields?: number;
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
const fieldLimit = (options: MultipartOptions): number => options.maxFields ?? 16;
const partLimit = (options: MultipartOptions): number => fieldLimit(options) + 16;

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
    throw new ApiFailure(
      "malformed_multipart",
      `the body must be multipart/form-data with a boundary (got '${type.slice(0, 100) || "no Content-Type"}')`,
    );
  }
  let bb: BusboyInstance;
  try {
    bb = new Busboy({
      headers: { ...req.headers, "content-type": type },
      limits: {
        fileSize: limits.maxBytes,
        files: 1,
        fields: fieldLimit(options),
        fieldSize: FIELD_MAX,
        parts: partLimit(options),
        headerPairs: 16,
      },
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
  return new PartsReader(req, bb, store, limits, budget, hasLength, options).result;
}

/**
 * The one file part, as it goes: none yet; paused while the route's `beforeFile` decides;
 * streaming into a staged blob; or read to its end and dropped.
 */
type FilePart =
  | { state: "none" }
  | { state: "deciding"; name: string | null; stream: Readable; decided: Promise<void> }
  | { state: "staging"; name: string | null; stream: Readable; staged: Promise<StagedBlob>; capture: HeadCapture }
  | { state: "draining"; name: string | null; stream: Readable; drained: Promise<void> };

/**
 * The body as a whole: parts arriving; busboy has read the last part and the file part is
 * being waited for; or answered (resolved or rejected) once, after which every event is ignored.
 */
type Phase = "reading" | "finishing" | "settled";

/**
 * One multipart body read as a state machine: `phase` for the body, `file` for its file part.
 * Every failure goes through `fail`, which settles once, stops reading and discards what was
 * staged before rejecting; `finish` settles with the parts once the file part is done.
 */
class PartsReader {
  readonly result: Promise<ParsedUpload>;
  private phase: Phase = "reading";
  private file: FilePart = { state: "none" };
  private readonly fields = new Map<string, string>();
  private readonly lists = new Map<string, string[]>();
  /** Body bytes received so far (limit, budget, and what a failure settles the budget with). */
  private received = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly fileField: string;
  private resolve!: (parsed: ParsedUpload) => void;
  private reject!: (err: Error) => void;

  constructor(
    private readonly req: Request,
    private readonly bb: BusboyInstance,
    private readonly store: BlobStore,
    private readonly limits: MultipartLimits,
    private readonly budget: ByteBudget,
    private readonly hasLength: boolean,
    private readonly options: MultipartOptions,
  ) {
    this.fileField = options.fileField ?? "image";
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(() => {
      budget.settle(this.received);
      this.fail(new ApiFailure("request_timeout", `the request body did not arrive within ${limits.bodyTimeoutMs} ms`));
    }, limits.bodyTimeoutMs);
    req.on("data", this.onData);
    req.on("aborted", this.onAborted);
    req.on("close", this.onClose);
    bb.on("file", this.onFile);
    bb.on("field", this.onField);
    bb.on("partsLimit", () => this.fail(new ApiFailure("malformed_multipart", `too many parts (at most ${partLimit(options)})`)));
    bb.on("filesLimit", () =>
      this.fail(new ApiFailure("malformed_multipart", `too many file parts (one '${this.fileField}' part is accepted)`)),
    );
    bb.on("fieldsLimit", () => this.fail(new ApiFailure("malformed_multipart", `too many fields (at most ${fieldLimit(options)})`)));
    bb.on("error", (err: Error) => this.fail(new ApiFailure("malformed_multipart", `malformed multipart body: ${err.message}`)));
    bb.on("finish", () => void this.finish());
    req.pipe(bb);
  }

  private settled(): boolean {
    return this.phase === "settled";
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.options.idleTimeout) this.timer.refresh();
    this.received += chunk.length;
    if (this.received > this.limits.maxBytes) return this.fail(tooLarge(this.limits.maxBytes));
    if (!this.hasLength) this.budget.chargeAhead(this.received)?.catch((err: Error) => this.fail(err));
  };

  private readonly onAborted = (): void => {
    this.budget.settle(this.received);
    this.fail(new ApiFailure("malformed_multipart", "the client closed the connection before the body ended"));
  };

  private readonly onClose = (): void => {
    if (!this.req.complete) this.onAborted();
  };

  private readonly onFile = (name: string, stream: Readable, filename: string | undefined): void => {
    // After a failure busboy still parses what it was already given: nothing may be staged then.
    if (this.settled() || name !== this.fileField || this.file.state !== "none") {
      // A body that ends early errors this ignored part too; unheard, that error would kill the process.
      stream.on("error", () => undefined);
      stream.resume();
      return;
    }
    const fileName = typeof filename === "string" ? filename : null;
    // fail() destroys the part with its reason: heard here even before a consumer is attached (every failure is answered through fail()).
    stream.on("error", () => undefined);
    stream.on("limit", () => this.fail(tooLarge(this.limits.maxBytes)));
    const { beforeFile } = this.options;
    if (!beforeFile) return this.stage(stream, fileName);
    // The part waits in busboy (and the body in the socket) while the route decides.
    stream.pause();
    const decided = beforeFile(this.fields).then(
      (choice) => {
        if (this.settled()) return;
        // Either consumer resumes the part when it starts reading (the store's pipe does so only once its file is open).
        if (choice === "drain") return this.drain(stream, fileName);
        this.stage(stream, fileName);
      },
      (err: unknown) => this.fail(asError(err)),
    );
    this.file = { state: "deciding", name: fileName, stream, decided };
  };

  private readonly onField = (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean): void => {
    if (nameTruncated) return this.fail(new ApiFailure("malformed_multipart", "a part name is too long"));
    if (valueTruncated)
      return this.fail(new ApiFailure("malformed_multipart", `field '${name.slice(0, 64)}' is longer than ${FIELD_MAX} bytes`));
    if (!this.fields.has(name)) this.fields.set(name, value);
    this.lists.set(name, [...(this.lists.get(name) ?? []), value]);
  };

  private stage(stream: Readable, name: string | null): void {
    const capture = new HeadCapture();
    const staged = this.store.stage(stream, { onChunk: capture.onData });
    staged.catch((err: unknown) => this.fail(asError(err)));
    this.file = { state: "staging", name, stream, staged, capture };
  }

  private drain(stream: Readable, name: string | null): Promise<void> {
    const drained = new Promise<void>((done) => {
      stream.on("end", done);
      stream.on("error", () => done());
      // resume() lets the part flow (and its bytes go) even when it was paused explicitly while the route decided.
      stream.resume();
    });
    this.file = { state: "draining", name, stream, drained };
    return drained;
  }

  /** The staged file once the file part is done (null when there was none or it was drained); rejects when staging failed. */
  private async fileOutcome(): Promise<StagedBlob | null> {
    if (this.file.state === "deciding") await this.file.decided;
    if (this.file.state === "draining") await this.file.drained;
    return this.file.state === "staging" ? this.file.staged : null;
  }

  /** Busboy read the last part: settle with the parts once the file part is done, unless a failure settled first. */
  private async finish(): Promise<void> {
    if (this.settled()) return;
    this.phase = "finishing";
    let staged: StagedBlob | null;
    try {
      staged = await this.fileOutcome();
    } catch {
      return; // fail() has answered
    }
    if (this.settled()) {
      await staged?.discard();
      return;
    }
    this.phase = "settled";
    this.stopListening();
    // A streamed body was charged a step ahead of its bytes.
    if (!this.hasLength) this.budget.settle(this.received);
    const file = this.file;
    this.resolve({
      fields: this.fields,
      lists: this.lists,
      file: staged,
      filePresent: file.state !== "none",
      fileName: file.state === "none" ? null : file.name,
      head: file.state === "staging" ? file.capture.head() : Buffer.alloc(0),
    });
  }

  private fail(err: Error): void {
    if (this.settled()) return;
    this.phase = "settled";
    this.stopListening();
    this.req.unpipe(this.bb);
    const file = this.file;
    if (file.state !== "none") file.stream.destroy(err);
    void (async () => {
      if (file.state === "staging") {
        const staged = await file.staged.catch(() => null);
        await staged?.discard();
      }
      this.reject(err);
    })();
  }

  private stopListening(): void {
    clearTimeout(this.timer);
    this.req.off("data", this.onData);
    this.req.off("aborted", this.onAborted);
    this.req.off("close", this.onClose);
  }
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

function tooLarge(max: number): ApiFailure {
  return new ApiFailure("payload_too_large", `the request body is larger than UPLOAD_MAX_BYTES (${max} bytes)`);
}
