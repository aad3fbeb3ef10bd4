import type { CommitResult, SidecarUpdate, StagedBlob } from "./blob-store.ts";

/** What a store does with its own temporary: publish it under its hash, or drop it. */
export interface StagedTemporary {
  publish(update: SidecarUpdate): Promise<CommitResult>;
  drop(): Promise<void>;
}

/**
 * The StagedBlob every store hands out: it settles once. A second commit is a caller's bug and
 * throws; a discard after a commit (routes discard in `finally`) does nothing, so it can never
 * remove a temporary the commit already moved or deleted.
 */
export function stagedBlob(staged: { hash: string; size: number; localPath: string | null }, temporary: StagedTemporary): StagedBlob {
  let settled = false;
  return {
    hash: staged.hash,
    size: staged.size,
    localPath: staged.localPath,
    async commit(update) {
      if (settled) throw new Error("staged blob already committed or discarded");
      settled = true;
      return temporary.publish(update);
    },
    async discard() {
      if (settled) return;
      settled = true;
      await temporary.drop();
    },
  };
}
