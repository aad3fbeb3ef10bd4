import { createBLAKE3 } from "hash-wasm";

/**
 * The blake3 of a file, read as a stream (a 50 MB upload is never held whole): the same hash
 * the store names content by, so the page can ask whether the bytes are already there.
 */
export async function blake3OfFile(file: Blob): Promise<string> {
  const hasher = await createBLAKE3();
  hasher.init();
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hasher.update(value);
  }
  return hasher.digest("hex");
}
