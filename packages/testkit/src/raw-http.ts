import { Agent, request } from "node:http";
import { connect } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown> | null;
}

const agent = new Agent({ keepAlive: false, maxSockets: 64 });

/**
 * One HTTP request with exactly the head and body given (nothing normalised, as a hostile
 * client would send it). The body may be a generator, written with backpressure and stopped as
 * soon as the server answers (a server may refuse a body before it has all arrived).
 * Rejects only when no answer came at all.
 */
export function rawRequest(
  base: string,
  opts: { method?: string; path: string; headers?: Record<string, string | number>; body?: Buffer | Iterable<Buffer>; timeoutMs?: number },
): Promise<RawAnswer> {
  const url = new URL(opts.path.startsWith("/") ? base + "/" : base);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({
      host: url.hostname,
      port: url.port,
      method: opts.method ?? "GET",
      path: opts.path,
      headers: opts.headers,
      agent,
      // Hostile cases send what Node's client would refuse to build.
      insecureHTTPParser: true,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 30_000} ms`)), opts.timeoutMs ?? 30_000);
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      const done = () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString("utf8");
        let json: Record<string, unknown> | null;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      };
      res.on("end", done);
      res.on("error", done);
      res.on("aborted", done);
    });
    req.on("error", (err) => {
      if (answered) return;
      clearTimeout(timer);
      reject(err);
    });
    const body = opts.body;
    if (body === undefined) return void req.end();
    if (Buffer.isBuffer(body)) return void req.end(body);
    const it = body[Symbol.iterator]();
    const pump = () => {
      for (;;) {
        if (answered || req.destroyed) return;
        const next = it.next();
        if (next.done) return void req.end();
        if (!req.write(next.value)) return void req.once("drain", pump);
      }
    };
    pump();
  });
}

/** `count` chunks of `size` bytes of `fill`, without holding them all. */
export function* repeated(size: number, count: number, fill = 0x61): Generator<Buffer> {
  const chunk = Buffer.alloc(size, fill);
  for (let i = 0; i < count; i++) yield chunk;
}

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  /** Extra raw header lines for the part. */
  extraHeaders?: string[];
  body: Buffer | string;
}

/** A hand-built multipart body (for bodies fetch and FormData would never write). */
export function multipart(parts: Part[], boundary = "----reliability7MA4YWxk"): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    for (const h of p.extraHeaders ?? []) head += `${h}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`, "utf8"), Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body, "utf8"), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface TrickleAnswer extends RawAnswer {
  /** Body bytes sent before the server closed the connection. */
  bytesSent: number;
}

/**
 * A client that sends its request head at once and then its body one byte every `everyMs`
 * (declared whole in Content-Length). Resolves once the server has closed the connection, with
 * what it answered; rejects if the connection is still open after `timeoutMs`.
 */
export function trickleRequest(
  base: string,
  opts: { method: string; path: string; headers: Record<string, string | number>; body: Buffer; everyMs: number; timeoutMs: number },
): Promise<TrickleAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let sent = 0;
    let tick: NodeJS.Timeout | undefined;
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    const timer = setTimeout(() => {
      clearInterval(tick);
      socket.destroy();
      reject(
        new Error(
          `the server kept the connection open for ${opts.timeoutMs} ms (${sent} bytes sent; received ${JSON.stringify(Buffer.concat(chunks).toString("latin1").slice(0, 200))})`,
        ),
      );
    }, opts.timeoutMs);
    socket.once("close", () => {
      clearTimeout(timer);
      clearInterval(tick);
      resolve({ ...parseAnswer(Buffer.concat(chunks)), bytesSent: sent });
    });
    const head = Object.entries({ Host: url.host, ...opts.headers, "Content-Length": opts.body.length }).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`${opts.method} ${opts.path} HTTP/1.1\r\n${head.join("")}\r\n`);
    tick = setInterval(() => {
      if (sent >= opts.body.length || socket.destroyed || chunks.length > 0) return void clearInterval(tick);
      socket.write(opts.body.subarray(sent, sent + 1));
      sent++;
    }, opts.everyMs);
  });
}

/** A whole HTTP/1.1 answer as read off a socket (a body with Content-Length, as our errors are sent). */
function parseAnswer(raw: Buffer): RawAnswer {
  const text = raw.toString("utf8");
  const split = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = (split < 0 ? text : text.slice(0, split)).split("\r\n");
  const headers: RawAnswer["headers"] = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = split < 0 ? "" : text.slice(split + 4);
  let json: Record<string, unknown> | null;
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    json = null;
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0), headers, text: body, json };
}

/**
 * The error code of an upload-face answer, lower-cased: `{code, …}` on the upload routes,
 * `{error: {code, …}}` in capitals on the asset API's envelope (ComfyUI's).
 */
export function errorCodeOf(json: Record<string, unknown> | null): string | undefined {
  const error = json?.error;
  const code = error !== null && typeof error === "object" ? (error as Record<string, unknown>).code : json?.code;
  return typeof code === "string" ? code.toLowerCase() : undefined;
}
