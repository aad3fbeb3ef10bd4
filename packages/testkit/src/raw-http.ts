import { Agent, request } from "node:http";

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
        let json: Record<string, unknown> | null = null;
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
