import type { RateLimiter } from "../adapters/limits/rate-limiter.ts";
import { rateLimited, ApiFailure } from "../domain/errors.ts";

const MiB = 1024 * 1024;

/**
 * One upload request's share of its key's bytes per minute (`upload_mbpm`). The body is charged
 * before it is read, never buffered: the declared Content-Length at once, or (without one) in
 * steps ahead of the bytes as they stream. Bytes that never arrive (the client went away, or
 * stalled past BODY_TIMEOUT_MS) are given back.
 */
export interface ByteBudget {
  /** Charge `bytes` more; rejects 429 when the key's minute is spent, 413 when this body alone is over its allowance. */
  charge(bytes: number): Promise<void>;
  /**
   * A body without Content-Length has streamed `received` bytes: when that passes what was
   * charged, charge the next step (the returned promise rejects as `charge` does).
   */
  chargeAhead(received: number): Promise<void> | undefined;
  /** The body is over (or cut short) after `received` bytes: give back what was charged beyond that. */
  settle(received: number): void;
}

/** Without a byte limit: counts nothing. */
export const UNLIMITED_BYTES: ByteBudget = {
  charge: async () => {},
  chargeAhead: () => undefined,
  settle: () => {},
};

/** The step a body without Content-Length is charged in, ahead of its bytes. */
export const STREAM_CHARGE_STEP = MiB;

export function byteBudget(limiter: RateLimiter, keyId: string, mibPerMinute: number): ByteBudget {
  if (mibPerMinute === 0) return UNLIMITED_BYTES;
  const allowance = mibPerMinute * MiB;
  let charged = 0;
  const charge = async (bytes: number): Promise<void> => {
    if (bytes <= 0) return;
    if (charged + bytes > allowance) {
      throw new ApiFailure(
        "payload_too_large",
        `the request body is larger than this key's upload allowance of ${mibPerMinute} MiB per minute (upload_mbpm)`,
      );
    }
    charged += bytes;
    const decision = await limiter.consume("upload_mbpm", keyId, allowance, bytes);
    if (decision.allowed) return;
    charged -= bytes;
    // Refused bytes were counted by the limiter; without this a refused large body would spend the minute of smaller ones.
    await limiter.refund("upload_mbpm", keyId, allowance, bytes).catch(() => undefined);
    throw rateLimited(decision.retryAfterMs, `this key's upload allowance of ${mibPerMinute} MiB per minute (upload_mbpm) is spent`);
  };
  return {
    charge,
    chargeAhead(received) {
      if (received <= charged) return undefined;
      // A step beyond the bytes, but not past the allowance while it can still hold the body.
      return charge(Math.max(received - charged, Math.min(STREAM_CHARGE_STEP, allowance - charged)));
    },
    settle(received) {
      const unused = charged - Math.max(0, received);
      if (unused <= 0) return;
      charged -= unused;
      void limiter.refund("upload_mbpm", keyId, allowance, unused).catch(() => undefined);
    },
  };
}
