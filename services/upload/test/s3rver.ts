import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error s3rver ships no types
import S3rver from "@20minutes/s3rver";

export interface RunningS3 {
  endpoint: string;
  port: number;
  accessKey: string;
  secretKey: string;
  stop(): Promise<void>;
}

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, unknown>;
  status: number;
  type: string;
  body: string;
}

/**
 * A real S3 protocol server (s3rver, SigV4-checked) on a free port over a temporary directory.
 * s3rver lacks ListMultipartUploads (`GET /<bucket>?uploads`), which the minio client sends
 * before a multipart upload; a first middleware answers it with an empty list.
 */
export async function startS3(): Promise<RunningS3> {
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  const accessKey = "S3RVER";
  const secretKey = "S3RVER";
  const server = new S3rver({ port: 0, address: "127.0.0.1", directory, silent: true, resetOnClose: true });
  (server.middleware as ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[]).unshift(async (ctx, next) => {
    if (ctx.method === "GET" && "uploads" in ctx.query && /^\/[^/]+\/?$/.test(ctx.path)) {
      const bucket = ctx.path.replace(/\//g, "");
      ctx.status = 200;
      ctx.type = "application/xml";
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
        `<Bucket>${bucket}</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>`;
      return;
    }
    await next();
  });
  const { port } = (await server.run()) as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    accessKey,
    secretKey,
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
