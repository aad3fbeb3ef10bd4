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

export interface KoaContext {
  method: string;
  path: string;
  query: Record<string, unknown>;
  status: number;
  type: string;
  body: string;
}

export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

/** What the tests use of an s3rver instance (the package ships no types). */
export interface S3rverServer {
  /** Koa middleware, first runs first. */
  middleware: KoaMiddleware[];
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

/**
 * A real S3 protocol server (s3rver, SigV4-checked), not yet running. s3rver lacks
 * ListMultipartUploads (`GET /<bucket>?uploads`), which the minio client sends before a multipart
 * upload; a first middleware answers it with an empty list.
 */
export function newS3rver(opts: { port: number; directory: string; resetOnClose?: boolean }): S3rverServer {
  const server = new S3rver({ ...opts, address: "127.0.0.1", silent: true }) as S3rverServer;
  server.middleware.unshift(async (ctx, next) => {
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
  return server;
}

/** s3rver running in this process on a free port over a temporary directory. */
export async function startS3(): Promise<RunningS3> {
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  const accessKey = "S3RVER";
  const secretKey = "S3RVER";
  const server = newS3rver({ port: 0, directory, resetOnClose: true });
  const { port } = await server.run();
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
