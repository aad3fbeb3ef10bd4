// @ts-expect-error s3rver ships no types
import S3rver from "@20minutes/s3rver";

/**
 * s3rver as its own process (PORT, DIRECTORY), so a test can kill it and start it again on the
 * same port and directory, as an S3 outage looks to the stack. s3rver lacks
 * ListMultipartUploads (`GET /<bucket>?uploads`), which the minio client sends before a
 * multipart upload; a first middleware answers it with an empty list.
 */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, unknown>;
  status: number;
  type: string;
  body: string;
}

const server = new S3rver({ port: Number(process.env.PORT), address: "127.0.0.1", directory: process.env.DIRECTORY, silent: true });
(server.middleware as ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[]).unshift(async (ctx, next) => {
  if (ctx.method === "GET" && ctx.path === "/healthz") {
    ctx.status = 200;
    ctx.type = "application/json";
    ctx.body = "{}";
    return;
  }
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
await server.run();
