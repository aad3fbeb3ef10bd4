import { readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blake3Hex, KEY, misnamedObjects, readStore, view } from "@app/testkit/assets";
import { record } from "@app/testkit/figures";
import { noiseImage, pngClaiming, tinyPng } from "@app/testkit/png";
import { SCRIPTS, startService, tempDir, type Service } from "@app/testkit/processes";
import { testCatalog } from "@app/testkit/catalog";
import { ASSET_QUERY_KEYS, assetApiFixedCases, assetApiRequests } from "@app/testkit/asset-api-requests";
import { errorCodeOf, multipart, rawRequest, repeated, type Part, type RawAnswer } from "@app/testkit/raw-http";
import { trickleJsonBodies } from "@app/testkit/slow-json-bodies";

/**
 * Hostile input end to end, through the gateway with the services mounted in it and through the
 * gateway proxying to search and upload processes: each time a corpus of over
 * 1,000 generated and fixed requests over both faces. Every answer is a 4xx in the face's error
 * shape (or a 200 where the input happens to be valid), never a 5xx, never a dropped connection;
 * every process stays up, the store keeps what it had, and RSS stays bounded.
 */
const nastyText = fc.oneof(
  fc.constantFrom(
    "..",
    "../..",
    "/etc/passwd",
    "a/../../b",
    "\0",
    "a\0b",
    "C:\\Windows\\win.ini",
    "\\\\host\\share",
    "~/x",
    "%2e%2e%2f",
    "\u202e\u0000",
    "clipspace",
    "ｃｌｉｐ",
    "..\u2215..",
    "\ud800",
    "🙂/../🙂",
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: fc.constantFrom(".", "/", "\\", "a", "\0", ":", "%"), maxLength: 12 }),
);
const META = [
  "'",
  '"',
  ";",
  "--",
  "/*",
  "*/",
  "%",
  "_",
  "\\",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  "*",
  "+",
  "?",
  "^",
  "$",
  "|",
  ".",
  "OR 1=1",
  "DROP TABLE nodes",
  "(?:",
  "\\d+",
  "(a+)+$",
  "${x}",
  "<script>",
  "\u0000",
];
/** Percent-encode UTF-8 bytes (encodeURIComponent throws on lone surrogates, which a hostile client can still send as bytes). */
const pct = (s: string) =>
  [...Buffer.from(s, "utf8")]
    .map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`))
    .join("");
const metaText = fc.array(fc.constantFrom(...META), { minLength: 1, maxLength: 40 }).map((a) => a.join(""));

type Mode = "embedded" | "proxied";
/** Whose error shape an answer has: upload and view `{code, message, error}`, search's, or the asset API's ComfyUI envelope `{error: {code, message, details}}`. */
type Face = "upload" | "search" | "assets";
const UPLOAD_PATHS = ["/api/upload/image", "/upload/image", "/api/upload/mask", "/upload/mask"];

/** The whole corpus against one stack: the gateway alone (services mounted), or proxying to search and upload processes. */
function hostileSuite(mode: Mode): void {
  let dir: string;
  let gw: Service;
  /** The processes whose memory and life are watched: the gateway, and in proxied mode the services behind it. */
  let watched: Service[] = [];
  let original: { name: string; bytes: Buffer };
  let rssStart: number[] = [];
  let rssPeak: number[] = [];
  const tally = { cases: 0, ok: 0, refused: 0, byStatus: new Map<number, number>() };

  beforeAll(async () => {
    dir = await tempDir(`hostile-${mode}`);
    const fixture = join(dir, "catalog.ndjson");
    writeFileSync(fixture, readFileSync(testCatalog().path, "utf8").split("\n").slice(0, 300).join("\n"));
    const common = { API_KEYS: KEY, BODY_TIMEOUT_MS: "10000" };
    if (mode === "embedded") {
      gw = await startService(SCRIPTS.gateway, { ...common, DATA_DIR: join(dir, "data"), CATALOG_SOURCE: fixture });
      watched = [gw];
    } else {
      const search = await startService(SCRIPTS.search, { DATA_DIR: join(dir, "search"), CATALOG_SOURCE: fixture });
      const upload = await startService(SCRIPTS.upload, { ...common, DATA_DIR: join(dir, "data") });
      gw = await startService(SCRIPTS.gateway, { ...common, DATA_DIR: join(dir, "gw"), SEARCH_URL: search.url, UPLOAD_URL: upload.url });
      watched = [gw, search, upload];
    }
    const bytes = await noiseImage(32, 32, "png");
    const up = await rawUpload("/api/upload/image", [{ name: "image", filename: "o.png", contentType: "image/png", body: bytes }]);
    expect(up.status).toBe(200);
    original = { name: up.json!.name as string, bytes };
    rssStart = watched.map((p) => p.rssKiB());
    rssPeak = [...rssStart];
  });
  afterAll(async () => {
    for (const p of watched) {
      if (p.child.exitCode !== null) console.error(`a process exited ${p.child.exitCode}:\n${p.output.slice(-40).join("\n")}`);
      await p.stop();
    }
    await rm(dir, { recursive: true, force: true });
  });

  function sampleRss(): void {
    watched.forEach((p, i) => (rssPeak[i] = Math.max(rssPeak[i]!, p.rssKiB())));
  }

  function rawUpload(path: string, parts: Part[], extra: Record<string, string | number> = {}): Promise<RawAnswer> {
    const { body, contentType } = multipart(parts);
    return rawRequest(gw.url, {
      method: "POST",
      path,
      headers: { "X-API-Key": KEY, "Content-Type": contentType, "Content-Length": body.length, ...extra },
      body,
    });
  }

  /** The one rule every answer obeys. `allowOk`: the input may be valid after all (a 2xx: 200, 201, 204, or 206 for a range). */
  function check(face: Face, a: RawAnswer, what: string, allowOk = false): void {
    tally.cases++;
    tally.byStatus.set(a.status, (tally.byStatus.get(a.status) ?? 0) + 1);
    const detail = `${what}: ${a.status} ${a.text.slice(0, 300)}`;
    if (a.status >= 200 && a.status < 300 && allowOk) {
      tally.ok++;
      return;
    }
    tally.refused++;
    expect(a.status, detail).toBeGreaterThanOrEqual(400);
    expect(a.status, detail).toBeLessThan(500);
    expect(a.json, detail).not.toBeNull();
    if (face === "assets") {
      const error = a.json!.error as Record<string, unknown> | undefined;
      expect(typeof error?.code === "string" && /^[A-Z_]+$/.test(error.code), detail).toBe(true);
      expect(typeof error!.message, detail).toBe("string");
      expect(typeof error!.details, detail).toBe("object");
      return;
    }
    expect(typeof a.json!.message, detail).toBe("string");
    expect(typeof a.json!.error, detail).toBe("string");
    if (face === "upload") expect(a.json!.code, detail).toBe(a.json!.error);
  }

  it("fixed cases: malformed multipart, huge headers, thousands of parts, a 100 MB field, traversal names, lying images, bombs", async () => {
    const png = tinyPng(1);
    const image = (over: Partial<Part> = {}): Part => ({ name: "image", filename: "a.png", contentType: "image/png", body: png, ...over });
    const up = (path: string, parts: Part[], what: string, allowOk = false, extra: Record<string, string | number> = {}) =>
      rawUpload(path, parts, extra).then(
        (a) => check("upload", a, what, allowOk),
        (err: Error) => Promise.reject(new Error(`${what}: no answer (${err.message})`)),
      );
    const send = async (face: Face, what: string, opts: Parameters<typeof rawRequest>[1], allowOk = false) =>
      check(
        face,
        await rawRequest(gw.url, opts).catch((err: Error) => Promise.reject(new Error(`${what}: no answer (${err.message})`))),
        what,
        allowOk,
      );
    const valid = multipart([image()]);

    // Content types and boundaries.
    for (const ct of [
      undefined,
      "",
      "text/plain",
      "application/json",
      "multipart/form-data",
      "multipart/form-data; boundary=",
      "multipart/form-data; boundary=nope",
      "multipart/mixed; boundary=----reliability7MA4YWxk",
      "multipart/form-data; boundary=" + "x".repeat(200),
    ]) {
      const headers: Record<string, string | number> = { "X-API-Key": KEY, "Content-Length": valid.body.length };
      if (ct !== undefined) headers["Content-Type"] = ct;
      await send("upload", `content-type ${ct}`, { method: "POST", path: "/api/upload/image", headers, body: valid.body });
    }
    // Truncated at every interesting point, with an honest Content-Length.
    for (const n of [0, 1, 10, 40, 80, 100, 150, valid.body.length - 40, valid.body.length - 30, valid.body.length - 1]) {
      const a = await rawRequest(gw.url, {
        method: "POST",
        path: "/api/upload/image",
        headers: { "X-API-Key": KEY, "Content-Type": valid.contentType, "Content-Length": n },
        body: valid.body.subarray(0, n),
      });
      // Cut inside the closing boundary, the image itself arrived whole: a lenient 200 is fine, under the whole image's name only.
      check("upload", a, `truncated at ${n}`, a.json?.name === `${blake3Hex(png)}.png`);
    }
    // Huge headers: on the request, and inside a part.
    // Refused by the HTTP parser before any body is read: sent without one, as the answer comes before it could be.
    await send("upload", "40 kB request header", {
      method: "POST",
      path: "/api/upload/image",
      headers: { "X-API-Key": KEY, "X-Big": "b".repeat(40_000), "Content-Type": valid.contentType, "Content-Length": 0 },
    });
    await send("search", "40 kB header on search", { path: "/nodes/search", headers: { "X-Big": "b".repeat(40_000) } });
    await send("search", "20 kB URL", { path: `/nodes/search?search=${"q".repeat(20_000)}` });
    // Host first: Node keeps the first 2,000 headers, and an HTTP/1.1 request without Host gets Node's own bare 400.
    await send(
      "search",
      "2,000 headers",
      {
        path: "/nodes/search",
        headers: { Host: "127.0.0.1", ...Object.fromEntries(Array.from({ length: 1999 }, (_, i) => [`x-h${i}`, "v"])) },
      },
      true,
    );
    await send(
      "search",
      "3,000 headers",
      {
        path: "/nodes/search",
        headers: { Host: "127.0.0.1", ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x${i}`, ""])) },
      },
      true,
    );
    // A part header past the parser's 80 kB is cut there (never buffered whole); the image after it is whole and valid.
    await up("/api/upload/image", [image({ extraHeaders: [`X-Part: ${"p".repeat(100_000)}`] })], "100 kB part header", true);
    // Part headers past the parser's count limit are ignored: the image itself is whole and valid.
    await up("/api/upload/image", [image({ extraHeaders: Array.from({ length: 500 }, (_, i) => `X-P${i}: v`) })], "500 part headers", true);
    // Thousands of parts.
    await up("/api/upload/image", [image(), ...Array.from({ length: 5000 }, (_, i) => ({ name: `f${i}`, body: "x" }))], "5,000 fields");
    await up(
      "/api/upload/image",
      Array.from({ length: 3000 }, () => image()),
      "3,000 image parts",
    );
    // 100 MB streamed: a text field and a file, with and without Content-Length.
    for (const [label, partHead] of [
      ["field", `--B\r\nContent-Disposition: form-data; name="subfolder"\r\n\r\n`],
      ["file", `--B\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`],
    ] as const) {
      const size = 100 * 1024 * 1024;
      const body = () => [Buffer.from(partHead), ...repeated(1024 * 1024, 100), Buffer.from("\r\n--B--\r\n")];
      sampleRss();
      await send("upload", `100 MB ${label} with Content-Length`, {
        method: "POST",
        path: "/api/upload/image",
        headers: { "X-API-Key": KEY, "Content-Type": "multipart/form-data; boundary=B", "Content-Length": size + partHead.length + 9 },
        body: body(),
        timeoutMs: 60_000,
      });
      sampleRss();
      await send("upload", `100 MB ${label} chunked`, {
        method: "POST",
        path: "/api/upload/image",
        headers: { "X-API-Key": KEY, "Content-Type": "multipart/form-data; boundary=B" },
        body: body(),
        timeoutMs: 60_000,
      });
      sampleRss();
    }
    // Names: filename is ignored (valid image → 200), subfolder is checked.
    for (const name of [
      "../../etc/passwd",
      "/etc/passwd",
      "a\0b.png",
      "C:\\x.png",
      "ｆｉｌｅ.png",
      "\u202egnp.exe",
      "🙂.png",
      "x".repeat(5000),
      "..",
      "",
    ]) {
      await up("/api/upload/image", [image({ filename: name })], `filename ${JSON.stringify(name.slice(0, 20))}`, true);
    }
    for (const sub of ["..", "../x", "a/../../b", "/abs", "\\\\host\\share", "C:\\x", "a\0b", "x/..", "..\\..", "s".repeat(2000)]) {
      const parts = [image(), { name: "subfolder", body: sub }];
      await up("/api/upload/image", parts, `subfolder ${JSON.stringify(sub.slice(0, 20))}`);
      await up(
        "/api/upload/mask",
        [...parts, { name: "original_ref", body: original.name }],
        `mask subfolder ${JSON.stringify(sub.slice(0, 20))}`,
      );
    }
    for (const type of ["../x", "a b", "<script>", "\0", "t".repeat(100), "input;rm -rf"]) {
      await up("/api/upload/image", [image(), { name: "type", body: type }], `type ${JSON.stringify(type.slice(0, 20))}`);
    }
    // original_ref of every wrong kind.
    const hash = original.name.split(".")[0]!;
    for (const ref of [
      undefined,
      "",
      " ",
      "{",
      "}",
      "[]",
      "null",
      "true",
      "42",
      '"x"',
      "{}",
      '{"filename":5}',
      '{"filename":null}',
      '{"filename":["a"]}',
      '{"filename":{"a":1}}',
      '{"filename":"../../etc/passwd"}',
      '{"filename":"/etc/passwd"}',
      `{"filename":"${hash}.exe"}`,
      `{"filename":"${hash.toUpperCase()}.png"}`,
      "blake3:",
      "blake3:xyz",
      `blake3:${hash.slice(1)}`,
      `blake3:${hash}0`,
      `blake3:${hash.toUpperCase()}`,
      `sha256:${hash}`,
      `${hash}`,
      `${hash}.`,
      `${hash}.png [secret]`,
      `${hash}.png\0`,
      `${"0".repeat(64)}.png`,
      `blake3:${"f".repeat(64)}`,
      `{"filename":"${"0".repeat(64)}.png","subfolder":"../.."}`,
      "x".repeat(70_000),
      "\u0000".repeat(10),
      JSON.stringify({ filename: original.name, subfolder: "../../etc" }),
    ]) {
      const parts: Part[] = [image()];
      if (ref !== undefined) parts.push({ name: "original_ref", body: ref });
      // The last one names a stored image (its subfolder is only echoed): valid.
      await up(
        "/api/upload/mask",
        parts,
        `original_ref ${JSON.stringify((ref ?? "<none>").slice(0, 40))}`,
        ref?.includes(original.name) === true,
      );
    }
    // Images that lie, and bombs.
    const jpeg = await noiseImage(8, 8, "jpg");
    await up("/api/upload/image", [image({ filename: "a.jpg", contentType: "image/jpeg", body: png })], "PNG bytes declared JPEG", true);
    await up("/api/upload/image", [image({ filename: "a.png", contentType: "image/png", body: jpeg })], "JPEG bytes declared PNG", true);
    for (const [label, body] of [
      ["text declared PNG", Buffer.from("definitely not an image")],
      ["HTML declared PNG", Buffer.from("<html><script>alert(1)</script></html>")],
      ["SVG", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>')],
      ["PNG signature only", png.subarray(0, 8)],
      ["PNG with a corrupt IHDR", Buffer.concat([png.subarray(0, 16), Buffer.alloc(16, 0xff), png.subarray(32)])],
      ["zero bytes", Buffer.alloc(0)],
      ["PDF", Buffer.from("%PDF-1.4\n%âãÏÓ\n1 0 obj<<>>endobj\n")],
      ["100,000 × 100,000 PNG bomb", pngClaiming(100_000, 100_000)],
      ["16,385 × 1 PNG", pngClaiming(16_385, 1)],
      ["8,193 × 8,193 PNG", pngClaiming(8193, 8193)],
      ["4 × 4,000,000,000 PNG", pngClaiming(4, 4_000_000_000)],
    ] as const) {
      await up("/api/upload/image", [image({ body })], label);
      await up("/api/upload/mask", [image({ body }), { name: "original_ref", body: original.name }], `mask: ${label}`);
    }
    // Auth is checked first, whatever the body.
    check(
      "upload",
      await rawRequest(gw.url, {
        method: "POST",
        path: "/api/upload/image",
        headers: { "Content-Type": valid.contentType, "Content-Length": valid.body.length },
        body: valid.body,
      }),
      "no key",
    );
    // Reading back: names that are not ours.
    for (const name of [
      "../../etc/passwd",
      "/etc/passwd",
      "%00",
      "..%2f..%2fetc%2fpasswd",
      `${hash}.png/../../x`,
      `${hash}.exe`,
      "a".repeat(5000),
      `${"0".repeat(64)}.png`,
    ]) {
      await send("upload", `view ${name.slice(0, 30)}`, {
        path: `/api/view?filename=${encodeURIComponent(name)}`,
        headers: { "X-API-Key": KEY },
      });
    }
    await send("upload", "view with filename twice", {
      path: `/api/view?filename=${original.name}&filename=x`,
      headers: { "X-API-Key": KEY },
    });
    for (const range of ["bytes=999999-", "bytes=5-1", "bytes=-0", "chars=0-1", "bytes=0-1,0-1,0-1", "bytes=" + "0-1,".repeat(2000)]) {
      await send(
        "upload",
        `view Range ${range.slice(0, 20)}`,
        { path: `/api/view?filename=${original.name}`, headers: { "X-API-Key": KEY, Range: range } },
        true,
      );
    }
    // Search: every wrong parameter.
    const bad: Record<string, string[]> = {
      page: ["0", "-1", "1.5", "abc", "1e3", "9999999999", "", " 1", "0x10", "１"],
      limit: ["0", "101", "-5", "abc", "1000000", "", "10.0", "NaN"],
      include_banned: ["yes", "1", "TRUE", "", "null", "on"],
    };
    for (const [param, values] of Object.entries(bad)) {
      for (const v of values) {
        for (const path of ["/nodes/search", "/nodes"])
          await send("search", `${param}=${v}`, { path: `${path}?${param}=${encodeURIComponent(v)}` });
      }
      await send("search", `${param} twice`, { path: `/nodes/search?${param}=1&${param}=2` });
    }
    await send("search", "include_banned on /nodes/:id", { path: "/nodes/x?include_banned=maybe" });
    for (const p of ["search", "repository_url_search", "app_node_search", "comfy_node_search", "supported_os", "supported_accelerator"]) {
      await send("search", `10 kB ${p}`, { path: `/nodes/search?${p}=${"a".repeat(10_240)}` });
      await send("search", `10 kB of metacharacters in ${p}`, {
        path: `/nodes/search?${p}=${encodeURIComponent("(a+)+$'--".repeat(1024).slice(0, 10_240))}`,
      });
    }
    await send("search", "comfy_node_search and app_node_search disagree", { path: "/nodes/search?comfy_node_search=a&app_node_search=b" });
    // The registry's read routes: every wrong parameter and body.
    for (const path of [
      "/nodes/comfyui-impact-pack/install?version=latest",
      "/nodes/comfyui-impact-pack/install?version=1.2",
      "/nodes/comfyui-impact-pack/install?version=1.0.0&version=2.0.0",
      "/nodes/comfyui-impact-pack/versions?statuses=nope",
      "/nodes/comfyui-impact-pack/versions?include_status_reason=2",
      "/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?limit=0",
      "/nodes/comfyui-impact-pack/versions/latest/comfy-nodes?page=x",
      "/versions?pageSize=101",
      "/versions?page=0",
      "/versions?nodeId=a&nodeId=b",
      `/versions?status_reason=${"r".repeat(600)}`,
      "/nodes?sort=id",
      "/nodes?timestamp=2025-01-01T00:00:00Z",
      `/nodes?${"node_id=x&".repeat(1001)}`,
      "/publishers/x/nodes?include_banned=2",
      "/comfy-nodes/%zz/node",
    ]) {
      await send("search", `registry read ${path.slice(0, 60)}`, { path });
    }
    for (const body of [
      "",
      "{",
      "[]",
      "null",
      '{"node_versions":{}}',
      '{"node_versions":[{"node_id":1,"version":"1"}]}',
      JSON.stringify({ node_versions: Array.from({ length: 1001 }, () => ({ node_id: "a", version: "1" })) }),
      JSON.stringify({ node_versions: [{ node_id: "x".repeat(300_000), version: "1" }] }),
    ]) {
      await send("search", `bulk body ${body.slice(0, 30)}`, {
        method: "POST",
        path: "/bulk/nodes/versions",
        headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
        body: Buffer.from(body),
      });
    }
    for (const path of [
      "/nodes/%zz",
      "/nodes/search?search=%zz",
      `/nodes/${"x".repeat(5000)}`,
      "/nodes/..%2f..%2fetc%2fpasswd",
      "/nodes/%00",
      "/nodes/search?search[$ne]=1",
    ]) {
      await send("search", `odd path ${path.slice(0, 30)}`, { path }, true);
    }
    sampleRss();
  });

  it("generated: random query strings on the search face", async () => {
    const keys = fc.constantFrom(
      "page",
      "limit",
      "search",
      "include_banned",
      "repository_url_search",
      "app_node_search",
      "comfy_node_search",
      "supported_os",
      "supported_accelerator",
      "node_id",
      "latest",
      "comfyui_version",
      "form_factor",
      "sort",
      "x",
      "search[]",
      "page[a]",
    );
    const value = fc.oneof(
      fc.integer({ min: -1000, max: 100_000 }).map(String),
      nastyText,
      metaText,
      fc.constantFrom("true", "false", "", "1", "10", "100"),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/nodes/search", "/nodes"),
        fc.array(fc.tuple(keys, value), { maxLength: 6 }),
        async (path, pairs) => {
          const qs = pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join("&");
          const a = await rawRequest(gw.url, { path: `${path}?${qs}` });
          check("search", a, `GET ${path}?${qs.slice(0, 200)}`, true);
          if (a.status === 200) {
            expect(typeof a.json!.total).toBe("number");
            expect(Array.isArray(a.json!.nodes)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
    sampleRss();
  });

  it("generated: random multipart bodies on the upload face", async () => {
    const png = tinyPng(2);
    const partBody = fc.oneof(
      fc.constant(png),
      fc.constant(pngClaiming(100_000, 100_000)),
      fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
      fc.integer({ min: 1, max: png.length - 1 }).map((n) => png.subarray(0, n)),
      nastyText.map((s) => Buffer.from(s, "utf8")),
    );
    const part = fc.record({
      name: fc.oneof(
        fc.constantFrom("image", "subfolder", "type", "overwrite", "original_ref", "mask"),
        nastyText.map((s) => s.replace(/["\r\n]/g, "")),
      ),
      filename: fc.option(
        nastyText.map((s) => s.replace(/["\r\n]/g, "")),
        { nil: undefined },
      ),
      contentType: fc.option(fc.constantFrom("image/png", "image/jpeg", "text/plain", "application/octet-stream", "image/svg+xml"), {
        nil: undefined,
      }),
      body: fc.oneof(
        partBody,
        fc.constantFrom(original.name, `blake3:${original.name.slice(0, 64)}`, "{}", '{"filename":"../x"}').map((s) => Buffer.from(s)),
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...UPLOAD_PATHS),
        fc.array(part, { maxLength: 6 }),
        fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
        async (path, parts, cut) => {
          const m = multipart(parts);
          const body = cut === undefined ? m.body : m.body.subarray(0, Math.min(cut, m.body.length));
          const a = await rawRequest(gw.url, {
            method: "POST",
            path,
            headers: { "X-API-Key": KEY, "Content-Type": m.contentType, "Content-Length": body.length },
            body,
          });
          check("upload", a, `POST ${path} ${parts.length} parts cut at ${cut}`, true);
          if (a.status === 200) {
            const img = parts.find((p) => p.name === "image" && p.filename !== undefined);
            if (path.endsWith("/image") && img) expect(a.json!.name).toBe(`${blake3Hex(Buffer.from(img.body))}.png`);
          }
        },
      ),
      { numRuns: 500 },
    );
    sampleRss();
  });

  it("generated: the asset API's ids, hashes, JSON bodies and queries", async () => {
    const hash = `blake3:${original.name.slice(0, 64)}`;
    const made = await rawRequest(gw.url, {
      method: "POST",
      path: "/api/assets/from-hash",
      headers: { "X-API-Key": KEY, "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify({ hash, tags: ["hostile"] })),
    });
    expect(made.status).toBe(201);
    const id = made.json!.id as string;
    const ref = fc.oneof(fc.constant(id), nastyText.map(pct), metaText.map(pct), fc.uuid().map(String));
    const requests = assetApiRequests({
      id: ref,
      hashRef: ref,
      storedHash: hash,
      text: { hash: nastyText, tags: [nastyText, metaText], name: [nastyText, metaText], nameTags: metaText, raw: [metaText] },
      query: {
        keys: ASSET_QUERY_KEYS,
        values: [nastyText, metaText, fc.integer({ min: -5, max: 600 }).map(String), fc.json({ maxDepth: 3 })],
        encode: pct,
      },
    });
    await fc.assert(
      fc.asyncProperty(requests, async ({ method, path, body: json }) => {
        const payload = json === undefined ? undefined : Buffer.from(json, "utf8");
        const a = await rawRequest(gw.url, {
          method,
          path,
          headers: { "X-API-Key": KEY, ...(payload && { "Content-Type": "application/json", "Content-Length": payload.length }) },
          ...(payload && { body: payload }),
        });
        if (method === "HEAD") {
          tally.cases++;
          tally.byStatus.set(a.status, (tally.byStatus.get(a.status) ?? 0) + 1);
          expect([200, 400, 404], `HEAD ${path}`).toContain(a.status);
          return;
        }
        check("assets", a, `${method} ${path.slice(0, 200)}`, true);
      }),
      { numRuns: 400 },
    );
    // The record and its bytes survived whatever was sent.
    const still = await rawRequest(gw.url, { path: `/api/assets/${id}`, headers: { "X-API-Key": KEY } });
    expect(still.status).toBe(200);
    sampleRss();
  });

  it("fixed: issue 20's asset API inputs (tag filter size, nesting depth, the tag limit, __proto__) and refused uploads", async () => {
    const storedHash = `blake3:${original.name.slice(0, 64)}`;
    const made = await rawRequest(gw.url, {
      method: "POST",
      path: "/api/assets/from-hash",
      headers: { "X-API-Key": KEY, "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify({ hash: storedHash, tags: ["fixed"] })),
    });
    expect(made.status).toBe(201);
    const id = made.json!.id as string;
    for (const c of assetApiFixedCases({ id, storedHash })) {
      const a = await rawRequest(gw.url, {
        method: c.method,
        path: c.path,
        headers: { "X-API-Key": KEY, ...(c.body && { "Content-Type": c.contentType!, "Content-Length": c.body.length }) },
        ...(c.body && { body: c.body }),
      });
      expect(a.status, `${c.name}: ${a.text.slice(0, 300)}`).toBe(c.status);
      check("assets", a, c.name, c.status < 300);
      if (c.code) expect((a.json!.error as { code: string }).code, c.name).toBe(c.code);
      if (c.keeps) expect(a.text, c.name).toContain(c.keeps);
    }
    const record = await rawRequest(gw.url, { path: `/api/assets/${id}`, headers: { "X-API-Key": KEY } });
    expect((record.json!.tags as string[]).length).toBe(64);
    sampleRss();
  });

  it("a JSON body trickling in (a byte every 2 s) on each JSON route of the asset API: 408 at BODY_TIMEOUT_MS, the connection closed", async () => {
    const made = await rawRequest(gw.url, {
      method: "POST",
      path: "/api/assets/from-hash",
      headers: { "X-API-Key": KEY, "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify({ hash: `blake3:${original.name.slice(0, 64)}`, name: "slow target" })),
    });
    expect(made.status).toBe(201);
    // The stack's BODY_TIMEOUT_MS is 10 s: well before Node's own 300 s request timeout.
    for (const a of await trickleJsonBodies(gw.url, { key: KEY, id: made.json!.id as string, everyMs: 2000, timeoutMs: 30_000 })) {
      tally.cases++;
      tally.refused++;
      tally.byStatus.set(a.status, (tally.byStatus.get(a.status) ?? 0) + 1);
      expect(a.status, `${a.route}: ${a.text}`).toBe(408);
      expect(errorCodeOf(a.json), a.route).toBe("request_timeout");
    }
    const still = await rawRequest(gw.url, { path: `/api/assets/${made.json!.id as string}`, headers: { "X-API-Key": KEY } });
    expect(still.json?.name).toBe("slow target");
    sampleRss();
  }, 60_000);

  it("after it all: the process is up, what it stored is intact, no temporary is left, memory stayed bounded", async () => {
    const health = await rawRequest(gw.url, { path: "/healthz" });
    expect(health.status).toBe(200);
    for (const p of watched) {
      expect((await rawRequest(p.url, { path: "/readyz" })).status, `${p.url}/readyz`).toBe(200);
      expect(
        p.output.filter((line) => /"level":60\b/.test(line)),
        "no fatal log line",
      ).toEqual([]);
    }
    const r = await view(gw.url, original.name);
    expect(r.status).toBe(200);
    expect(r.bytes.equals(original.bytes)).toBe(true);
    const store = await readStore(join(dir, "data"));
    expect(store.temporaries).toEqual([]);
    expect(await misnamedObjects(store)).toEqual([]);
    sampleRss();
    for (const p of watched) expect(p.child.exitCode, "no process exited").toBeNull();
    const rssEnd = watched.map((p) => p.rssKiB());
    expect(tally.cases).toBeGreaterThanOrEqual(1000);
    expect(tally.byStatus.get(500) ?? 0).toBe(0);
    // Generous: 100 MB bodies went through; memory must not have grown by anything like that per request.
    watched.forEach((_, i) => {
      expect(rssPeak[i]!, `peak RSS of process ${i}: ${rssPeak[i]} KiB from ${rssStart[i]} KiB`).toBeLessThan(rssStart[i]! + 200 * 1024);
      expect(rssEnd[i]!).toBeLessThan(rssStart[i]! + 150 * 1024);
    });
    const mib = (kib: number[]) => kib.map((k) => +(k / 1024).toFixed(1));
    record(`hostile-${mode}`, {
      cases: tally.cases,
      answered2xx: tally.ok,
      refused4xx: tally.refused,
      statuses: Object.fromEntries([...tally.byStatus.entries()].sort((a, b) => a[0] - b[0])),
      processes: mode === "embedded" ? ["gateway"] : ["gateway", "search", "upload"],
      rssStartMiB: mib(rssStart),
      rssPeakMiB: mib(rssPeak),
      rssEndMiB: mib(rssEnd),
    });
  });
}

describe("hostile input through the gateway (services mounted in it)", () => hostileSuite("embedded"));
describe("hostile input through the gateway (proxying to search and upload processes)", () => hostileSuite("proxied"));
