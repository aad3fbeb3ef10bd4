import express from "express";
import { readFileSync } from "node:fs";
import { requiredEnv, testEnv } from "@app/testkit/env";

/**
 * The HTTP baseline: a bare Express app answering precomputed pages in turn (a JSON array of
 * bodies in SAMPLE_PAGES_FILE), whatever the path: what the gateway would cost if its answers
 * cost nothing to make. The pages are the gateway's own answers to a sample of the load, so the
 * baseline sends the same mix of sizes and characters (35% of the real catalog's first-sight
 * answers hold non-ASCII text).
 */
const pages = JSON.parse(readFileSync(requiredEnv("SAMPLE_PAGES_FILE"), "utf8")) as string[];
let next = 0;
const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.get("/readyz", (_req, res) => {
  res.json({ status: "ready" });
});
app.use((_req, res) => {
  res.type("application/json").send(pages[next]);
  next = (next + 1) % pages.length;
});
app.listen(requiredEnv("PORT"), testEnv.HOST);
