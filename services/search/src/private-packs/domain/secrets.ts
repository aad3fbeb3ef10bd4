import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new random secret: a prefix naming its kind, then 32 random bytes. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

/** What is stored of a secret: its sha256, hex. */
export function digestOf(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/**
 * Whether `presented` is one of the secrets whose digests are given. Every digest is compared,
 * over fixed 32-byte values and without stopping at a match, so timing tells nothing.
 */
export function matchesAny(presented: string, digests: readonly string[]): boolean {
  const mine = Buffer.from(digestOf(presented), "hex");
  let found = false;
  for (const d of digests) {
    const theirs = Buffer.from(d, "hex");
    if (theirs.length === mine.length && timingSafeEqual(mine, theirs)) found = true;
  }
  return found;
}

/** A listed token's mask: its kind and last four characters (of 43 random ones). */
export function hintOf(secret: string, prefix: string): string {
  return `${prefix}…${secret.slice(-4)}`;
}
