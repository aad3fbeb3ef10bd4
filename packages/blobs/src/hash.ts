/** A blob's name: the lower-case blake3 hex of its bytes. Storage paths are only ever built from a string this accepts. */
export const HASH_RE = /^[0-9a-f]{64}$/;
