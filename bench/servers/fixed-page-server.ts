import express from "express";

/**
 * The HTTP baseline: a bare Express app answering one precomputed page (passed in
 * FIXED_PAGE_FILE) for every path — what the search would cost if searching cost nothing.
 */
import { readFileSync } from "node:fs";

const body = readFileSync(process.env.FIXED_PAGE_FILE!, "utf8");
const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.get("/readyz", (_req, res) => { res.json({ status: "ready" }); });
app.use((_req, res) => {
  res.type("application/json").send(body);
});
app.listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1");
