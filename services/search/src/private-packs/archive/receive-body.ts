import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { PrivatePackError } from "../domain/errors.ts";

export interface BodyLimits {
  maxBytes: number;
  /** A body that sends nothing for this long is abandoned. */
  idleMs: number;
}

/**
 * The request body streamed into `file` (never held in memory), within the asset uploads' byte
 * limit and idle timeout. On any failure the file is removed before the error is thrown.
 */
export async function receiveBody(req: IncomingMessage, file: string, limits: BodyLimits): Promise<number> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const out = createWriteStream(file, { flags: "wx", mode: 0o600 });
  let size = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const idle = setTimeout(
        () => fail(new PrivatePackError(408, `the archive stopped arriving (nothing for ${limits.idleMs} ms)`, "registry")),
        limits.idleMs,
      );
      const fail = (err: unknown) => {
        clearTimeout(idle);
        req.unpipe(out);
        req.resume();
        reject(err);
      };
      req.on("data", (chunk: Buffer) => {
        size += chunk.length;
        idle.refresh();
        if (size > limits.maxBytes) fail(tooLarge(limits.maxBytes));
      });
      req.once("aborted", () => fail(new PrivatePackError(400, "the upload was cut before its end", "registry")));
      req.once("error", fail);
      out.once("error", fail);
      out.once("finish", () => {
        clearTimeout(idle);
        if (!req.complete) return reject(new PrivatePackError(400, "the upload was cut before its end", "registry"));
        resolve();
      });
      req.pipe(out);
    });
    return size;
  } catch (err) {
    out.destroy();
    await rm(file, { force: true });
    throw err;
  }
}

function tooLarge(max: number): PrivatePackError {
  return new PrivatePackError(413, `the archive is larger than ${max} bytes (UPLOAD_MAX_BYTES)`, "registry");
}
