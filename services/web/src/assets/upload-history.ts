import type { UploadResult } from "@app/contracts";

/**
 * The uploads made from this browser (localStorage). The upload API answers a re-upload exactly
 * as a first upload (same name, nothing written), so besides asking the asset API before an
 * upload, "already stored" is also told from this list: a name seen before from here. It also
 * feeds the gallery where the server has no asset list.
 */
export interface HistoryEntry extends UploadResult {
  kind: "image" | "mask";
  fileName?: string;
  at: string;
}

const ITEM = "registry.uploads";
const MAX = 200;

export function readHistory(): HistoryEntry[] {
  try {
    const list = JSON.parse(localStorage.getItem(ITEM) ?? "[]") as unknown;
    return Array.isArray(list) ? (list as HistoryEntry[]) : [];
  } catch {
    return [];
  }
}

/** Records an upload; true when this browser had already uploaded the same content (same name). */
export function remember(entry: HistoryEntry): boolean {
  const list = readHistory();
  const seen = list.some((e) => e.name === entry.name);
  const rest = list.filter((e) => e.name !== entry.name);
  localStorage.setItem(ITEM, JSON.stringify([entry, ...rest].slice(0, MAX)));
  return seen;
}
