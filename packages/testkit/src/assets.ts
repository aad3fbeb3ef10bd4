import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { blake3 } from "@napi-rs/blake-hash";

export const KEY = "reliability-key-0123456789abcdef";
export const blake3Hex = (b: Buffer): string => blake3(b).toString("hex");

export interface UploadAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** POST an image (and fields) as the ComfyUI frontend does: FormData over fetch. */
export async function upload(
  base: string,
  image: Buffer,
  opts: { path?: string; fields?: Record<string, string>; filename?: string; key?: string | null; timeoutMs?: number } = {},
): Promise<UploadAnswer> {
  const form = new FormData();
  form.set("image", new Blob([new Uint8Array(image)], { type: "image/png" }), opts.filename ?? "clipspace-mask-1.png");
  for (const [k, v] of Object.entries(opts.fields ?? { type: "input", subfolder: "clipspace" })) form.set(k, v);
  const headers: Record<string, string> = {};
  if (opts.key !== null) headers["X-API-Key"] = opts.key ?? KEY;
  const res = await fetch(`${base}${opts.path ?? "/api/upload/image"}`, {
    method: "POST",
    body: form,
    headers,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
  });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { unparsed: text.slice(0, 200) };
  }
  return { status: res.status, body };
}

export async function view(base: string, name: string): Promise<{ status: number; bytes: Buffer; contentType: string | null }> {
  const res = await fetch(`${base}/api/view?filename=${encodeURIComponent(name)}&type=input`, { headers: { "X-API-Key": KEY } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get("content-type") };
}

/** Run `task(i)` for i in [0, count) with at most `inFlight` at once. */
export async function pool<T>(count: number, inFlight: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

export interface StoreContents {
  /** hash → path of every object under a hash name. */
  blobs: Map<string, string>;
  /** hash → path of every record beside an object. */
  records: Map<string, string>;
  /** Files left in the store's temporary directory. */
  temporaries: string[];
  /** Resumable (tus) uploads not yet complete, in the store's `uploads/` directory. */
  partials: string[];
  /** Anything else found under the store's root (there should be nothing). */
  strays: string[];
}

/** Walk the filesystem store (`DATA_DIR/blobs/ab/cd/<hash>[.json]`, `DATA_DIR/blobs/tmp/`, `DATA_DIR/blobs/uploads/`) as an auditor would. */
export async function readStore(dataDir: string): Promise<StoreContents> {
  const root = join(dataDir, "blobs");
  const out: StoreContents = { blobs: new Map(), records: new Map(), temporaries: [], partials: [], strays: [] };
  const list = (d: string) => readdir(d).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? [] : Promise.reject(err)));
  for (const a of await list(root)) {
    if (a === "tmp" || a === "uploads") {
      (a === "tmp" ? out.temporaries : out.partials).push(...(await list(join(root, a))));
      continue;
    }
    if (!/^[0-9a-f]{2}$/.test(a)) {
      out.strays.push(a);
      continue;
    }
    for (const b of await list(join(root, a))) {
      for (const name of await list(join(root, a, b))) {
        const m = /^([0-9a-f]{64})(\.json)?$/.exec(name);
        const path = join(root, a, b, name);
        if (!m || m[1]!.slice(0, 2) !== a || m[1]!.slice(2, 4) !== b) out.strays.push(path);
        else if (m[2]) out.records.set(m[1]!, path);
        else out.blobs.set(m[1]!, path);
      }
    }
  }
  return out;
}

/** Every object whose bytes do not hash to its name (must be none). */
export async function misnamedObjects(store: StoreContents): Promise<string[]> {
  const bad: string[] = [];
  for (const [hash, path] of store.blobs) {
    if (blake3Hex(await readFile(path)) !== hash) bad.push(path);
  }
  return bad;
}
