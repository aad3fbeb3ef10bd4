/**
 * Per-key rate limits, as written after a key's label in the key file (`upload_rpm=60
 * upload_mbpm=512`) and as the RATE_LIMIT_* defaults. Every limit counts over a minute; 0 means
 * no limit. A limit a key does not name is the default's.
 */
export const LIMIT_NAMES = ["upload_rpm", "upload_mbpm", "assets_rpm"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** Upload requests, upload MiB, and requests on every other keyed route, each per minute. */
export type RateLimits = Record<LimitName, number>;
export type KeyLimits = Partial<RateLimits>;

export const NO_LIMITS: RateLimits = { upload_rpm: 0, upload_mbpm: 0, assets_rpm: 0 };

const TOKEN_RE = /^([a-z_]+)=(.*)$/;
const MAX_LIMIT = 1_000_000_000;

/** True for a `name=value` token: what follows a label in a key-file line. */
export function isLimitToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** `upload_rpm=60 upload_mbpm=512` → limits; throws naming the bad token. */
export function parseKeyLimits(tokens: string[]): KeyLimits {
  const limits: KeyLimits = {};
  for (const token of tokens) {
    const m = TOKEN_RE.exec(token);
    if (!m) throw new Error("a word after the first limit is not name=value");
    const [, name, value] = m as unknown as [string, string, string];
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
      throw new Error(`unknown limit '${name}' (known: ${LIMIT_NAMES.join(", ")})`);
    }
    if (!/^\d{1,10}$/.test(value) || Number(value) > MAX_LIMIT) {
      throw new Error(`${name} must be a whole number from 0 (no limit) to ${MAX_LIMIT}`);
    }
    if (name in limits) throw new Error(`${name} is given twice`);
    limits[name as LimitName] = Number(value);
  }
  return limits;
}

export function formatKeyLimits(limits: KeyLimits): string {
  return LIMIT_NAMES.filter((n) => limits[n] !== undefined)
    .map((n) => `${n}=${limits[n]}`)
    .join(" ");
}

export function effectiveLimits(defaults: RateLimits, own: KeyLimits): RateLimits {
  return { ...defaults, ...own };
}
