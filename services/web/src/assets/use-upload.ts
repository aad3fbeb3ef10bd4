import type { Asset } from "@app/contracts";
import { useEffect, useRef, useState } from "preact/hooks";
import { getAsset, isStored, uploadAssetForm, type AssetUploadSettings } from "../api/assets.ts";
import { ApiError, describeError, isAbort } from "../api/http.ts";
import { hasResumableUploads, resumableUpload, type ResumableUpload } from "../api/resumable.ts";
import { blake3OfFile } from "./content-hash.ts";

export interface Uploaded {
  asset: Asset;
  /** The bytes were in the store before this upload (only a record was added). */
  alreadyStored: boolean;
  /** How they went up: the resumable (tus) endpoint, the one-request form, or not at all (known bytes). */
  via: "resumable" | "form" | "known";
  file: File;
}

export type UploadPhase = { kind: "idle" } | { kind: "hashing" } | { kind: "sending"; sent: number; total: number; paused: boolean };

/**
 * One upload at a time: hash the file (blake3), record it without sending when the store has
 * the bytes, else send it resumable (tus, pause and resume) where the server has it, or in one
 * POST. `pausable` when the upload in flight is a resumable one.
 */
export function useUpload(apiKey: string, onUploaded: (u: Uploaded) => void) {
  const [phase, setPhase] = useState<UploadPhase>({ kind: "idle" });
  const [error, setError] = useState<{ message: string; status: number } | null>(null);
  const [resumable, setResumable] = useState<boolean | null>(null);
  const current = useRef<ResumableUpload | null>(null);
  const formUpload = useRef<AbortController | null>(null);

  useEffect(() => {
    void hasResumableUploads(apiKey).then(setResumable);
    return () => {
      void current.current?.pause();
      formUpload.current?.abort();
    };
  }, [apiKey]);

  const fail = (err: unknown) => {
    current.current = null;
    setPhase({ kind: "idle" });
    if (!isAbort(err)) setError({ message: describeError(err), status: err instanceof ApiError ? err.status : 0 });
  };
  const finish = async (assetOrId: Asset | string, alreadyStored: boolean, via: Uploaded["via"], f: File) => {
    current.current = null;
    try {
      const asset = typeof assetOrId === "string" ? await getAsset(assetOrId, apiKey) : assetOrId;
      setPhase({ kind: "idle" });
      onUploaded({ asset, alreadyStored, via, file: f });
    } catch (err) {
      fail(err);
    }
  };

  const send = async (f: File, settings: AssetUploadSettings) => {
    setError(null);
    setPhase({ kind: "hashing" });
    try {
      const hash = `blake3:${await blake3OfFile(f)}`;
      if (await isStored(hash.slice("blake3:".length), apiKey)) {
        const created = await uploadAssetForm(null, settings, apiKey, { hash });
        return void (await finish(created, true, "known", f));
      }
      setPhase({ kind: "sending", sent: 0, total: f.size, paused: false });
      if (resumable ?? (await hasResumableUploads(apiKey))) {
        const upload = resumableUpload(
          f,
          settings,
          apiKey,
          {
            onProgress: (sent, total) => setPhase((p) => ({ kind: "sending", sent, total, paused: p.kind === "sending" && p.paused })),
            onDone: (id) => void finish(id, false, "resumable", f),
            onError: fail,
          },
          hash,
        );
        current.current = upload;
        upload.start();
      } else {
        formUpload.current = new AbortController();
        const created = await uploadAssetForm(f, settings, apiKey, {
          onProgress: (sent, total) => setPhase({ kind: "sending", sent, total: total || f.size, paused: false }),
          signal: formUpload.current.signal,
        });
        await finish(created, !created.created_new, "form", f);
      }
    } catch (err) {
      fail(err);
    }
  };
  const pause = async () => {
    if (!current.current) return;
    await current.current.pause();
    setPhase((p) => (p.kind === "sending" ? { ...p, paused: true } : p));
  };
  const resume = () => {
    setPhase((p) => (p.kind === "sending" ? { ...p, paused: false } : p));
    current.current?.start();
  };
  const cancel = async () => {
    formUpload.current?.abort();
    await current.current?.cancel();
    current.current = null;
    setPhase({ kind: "idle" });
  };

  return { phase, error, resumable, pausable: current.current !== null, send, pause, resume, cancel, clearError: () => setError(null) };
}
