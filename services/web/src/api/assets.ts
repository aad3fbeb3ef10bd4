import type { AssetsList, MaskUploadResult, UploadResult } from "@app/contracts";
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
function postForm<T>(url: string, form: FormData, key: string, onProgress?: (sent: number, total: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
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
    xhr.onerror = () => reject(new ApiError(0, "the upload was cut off before the server answered (network error, or the server closed the connection)"));
    xhr.send(form);
  });
}

export function uploadImage(file: Blob, fileName: string, fields: UploadFields, key: string, onProgress?: (sent: number, total: number) => void): Promise<UploadResult> {
  const form = new FormData();
  form.append("subfolder", fields.subfolder);
  form.append("type", fields.type);
  form.append("image", file, fileName);
  return postForm<UploadResult>("/api/upload/image", form, key, onProgress);
}

export function uploadMask(mask: Blob, original: UploadResult, fields: UploadFields, key: string, onProgress?: (sent: number, total: number) => void): Promise<MaskUploadResult> {
  const form = new FormData();
  form.append("subfolder", fields.subfolder);
  form.append("type", fields.type);
  form.append("original_ref", JSON.stringify({ filename: original.name, subfolder: original.subfolder, type: original.type }));
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

/**
 * The key's assets, newest first, only those carrying `tag` when one is given; null where this
 * server has no asset API yet (404): the gallery then shows this browser's uploads.
 */
export async function listAssets(key: string, signal: AbortSignal, tag = ""): Promise<AssetsList | null> {
  const filter = tag.trim() ? `&tags_all=${encodeURIComponent(tag.trim())}` : "";
  try {
    return await getJson<AssetsList>(`/api/assets?limit=100&sort=created_at&order=desc${filter}`, { headers: { "X-API-Key": key }, signal });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}
