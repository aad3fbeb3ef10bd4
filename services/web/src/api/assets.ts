import type { Asset, AssetCreated, AssetsList, MaskUploadResult, TagsAdded, TagsRemoved } from "@app/contracts";
import { ApiError, apiErrorFrom, getJson } from "./http.ts";

/** The API key, asked once and kept in this browser (localStorage), sent as X-API-Key. */
const KEY_ITEM = "registry.apiKey";
export const readKey = (): string | null => localStorage.getItem(KEY_ITEM);
export const saveKey = (key: string): void => localStorage.setItem(KEY_ITEM, key.trim());
export const forgetKey = (): void => localStorage.removeItem(KEY_ITEM);

export interface UploadFields {
  subfolder: string;
  type: string;
}

/**
 * A multipart upload through XMLHttpRequest, the one browser API that reports upload progress.
 * Resolves with the API's JSON, rejects with its `{code, message}` as an ApiError.
 */
export function postForm<T>(
  url: string,
  form: FormData,
  key: string,
  onProgress?: (sent: number, total: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    signal?.addEventListener("abort", () => xhr.abort());
    xhr.onabort = () => reject(new DOMException("the upload was stopped", "AbortError"));
    xhr.open("POST", url);
    xhr.setRequestHeader("X-API-Key", key);
    if (onProgress) xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText) as T);
        } catch {
          reject(new ApiError(xhr.status, "the server's answer was not JSON"));
        }
      } else {
        reject(apiErrorFrom(xhr.status, xhr.responseText));
      }
    };
    xhr.onerror = () =>
      reject(new ApiError(0, "the upload was cut off before the server answered (network error, or the server closed the connection)"));
    xhr.send(form);
  });
}

/** `originalRef`: /upload/mask's `original_ref`, `blake3:<hex>` or ComfyUI's JSON `{filename, subfolder, type}`. */
export function uploadMask(
  mask: Blob,
  originalRef: string,
  fields: UploadFields,
  key: string,
  onProgress?: (sent: number, total: number) => void,
): Promise<MaskUploadResult> {
  const form = new FormData();
  form.append("subfolder", fields.subfolder);
  form.append("type", fields.type);
  form.append("original_ref", originalRef);
  form.append("image", mask, "mask.png");
  return postForm<MaskUploadResult>("/api/upload/mask", form, key, onProgress);
}

/**
 * HEAD /api/assets/hash/blake3:<hex> (the asset API's dedup check): true only on a 200. A 404
 * means unknown content, or a server without the asset API; either way not known stored.
 */
export async function isStored(hashHex: string, key: string): Promise<boolean> {
  try {
    const res = await fetch(`/api/assets/hash/blake3:${hashHex}`, { method: "HEAD", headers: { "X-API-Key": key } });
    return res.status === 200;
  } catch {
    return false;
  }
}

export const viewUrl = (name: string): string => `/api/view?filename=${encodeURIComponent(name)}`;

/** The asset routes need the key header, so an <img src> cannot load them: fetch the bytes, show a blob URL. */
export async function fetchBlob(url: string, key: string, signal?: AbortSignal): Promise<Blob> {
  const res = await fetch(url, { headers: { "X-API-Key": key }, signal });
  if (!res.ok) throw apiErrorFrom(res.status, await res.text());
  return res.blob();
}

export interface AssetQuery {
  tag?: string;
  name?: string;
  /** The previous page's `next_cursor`. */
  after?: string;
  limit?: number;
}

/**
 * A page of the key's assets, newest first, filtered by a tag and a part of the name; null
 * where this server has no asset API (404): the gallery then shows this browser's uploads.
 */
export async function listAssets(key: string, q: AssetQuery, signal: AbortSignal): Promise<AssetsList | null> {
  const params = new URLSearchParams({ limit: String(q.limit ?? 100), sort: "created_at", order: "desc" });
  if (q.tag?.trim()) params.set("tags_all", q.tag.trim());
  if (q.name?.trim()) params.set("name_contains", q.name.trim());
  if (q.after) params.set("after", q.after);
  try {
    return await getJson<AssetsList>(`/api/assets?${params}`, { headers: { "X-API-Key": key }, signal });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

async function sendJson<T>(method: string, url: string, key: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { "X-API-Key": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw apiErrorFrom(res.status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

const assetUrl = (id: string) => `/api/assets/${encodeURIComponent(id)}`;
export const contentUrl = (id: string, inline = true): string => `${assetUrl(id)}/content${inline ? "?disposition=inline" : ""}`;
export const getAsset = (id: string, key: string): Promise<Asset> => sendJson("GET", assetUrl(id), key);
export const renameAsset = (id: string, name: string, key: string): Promise<Asset> => sendJson("PUT", assetUrl(id), key, { name });
export const addTags = (id: string, tags: string[], key: string): Promise<TagsAdded> =>
  sendJson("POST", `${assetUrl(id)}/tags`, key, { tags });
export const removeTags = (id: string, tags: string[], key: string): Promise<TagsRemoved> =>
  sendJson("DELETE", `${assetUrl(id)}/tags`, key, { tags });
export const deleteAsset = (id: string, key: string): Promise<void> => sendJson("DELETE", assetUrl(id), key);

/** What the person chose before the upload: where it goes (tags), what it is called, its subfolder. */
export interface AssetUploadSettings {
  tags: string[];
  name: string;
  subfolder: string;
}

/** user_metadata as the upload records it: the subfolder the person chose, where one was. */
export const uploadMetadata = (s: AssetUploadSettings): Record<string, string> =>
  s.subfolder.trim() ? { subfolder: s.subfolder.trim() } : {};

/**
 * POST /api/assets (multipart), the asset API's one-request upload: used where the server has no
 * resumable endpoint. A known `hash` without a file records the stored bytes without sending them.
 */
export function uploadAssetForm(
  file: Blob | null,
  settings: AssetUploadSettings,
  key: string,
  opts: { hash?: string; onProgress?: (sent: number, total: number) => void; signal?: AbortSignal } = {},
): Promise<AssetCreated> {
  const form = new FormData();
  form.append("tags", JSON.stringify(settings.tags));
  form.append("name", settings.name);
  form.append("user_metadata", JSON.stringify(uploadMetadata(settings)));
  if (opts.hash) form.append("hash", opts.hash);
  if (file) form.append("file", file, settings.name);
  return postForm<AssetCreated>("/api/assets", form, key, opts.onProgress, opts.signal);
}

/** Saves an asset's bytes under its name (the route needs the key header, so a plain link cannot). */
export async function downloadAsset(id: string, name: string, key: string): Promise<void> {
  const blob = await fetchBlob(contentUrl(id, false), key);
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The first `bytes` of an asset as text (a Range request; a server that ignores Range is cut here). */
export async function readTextStart(id: string, key: string, bytes = 16 * 1024): Promise<{ text: string; cut: boolean }> {
  const res = await fetch(contentUrl(id), { headers: { "X-API-Key": key, Range: `bytes=0-${bytes - 1}` } });
  if (!res.ok) throw apiErrorFrom(res.status, await res.text());
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let got = 0;
  while (got < bytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
  }
  await reader.cancel().catch(() => undefined);
  const all = new Uint8Array(got);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  const total = Number(res.headers.get("Content-Range")?.split("/")[1] ?? res.headers.get("Content-Length") ?? got);
  return { text: new TextDecoder().decode(all.subarray(0, bytes)), cut: got >= bytes || total > bytes };
}
