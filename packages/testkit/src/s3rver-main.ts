import { newS3rver } from "./s3rver.ts";
import { requiredEnv } from "./env.ts";

/**
 * s3rver as its own process (PORT, DIRECTORY), so a test can kill it and start it again on the
 * same port and directory, as an S3 outage looks to the stack.
 */
const directory = requiredEnv("DIRECTORY");
const server = newS3rver({ port: requiredEnv("PORT"), directory });
// Ahead of everything else: the harness polls it to know the process is up.
server.middleware.unshift(async (ctx, next) => {
  if (ctx.method === "GET" && ctx.path === "/healthz") {
    ctx.status = 200;
    ctx.type = "application/json";
    ctx.body = "{}";
    return;
  }
  await next();
});
await server.run();
