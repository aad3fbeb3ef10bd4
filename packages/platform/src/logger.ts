import { pino, type Logger } from "pino";
import type { Config } from "./config.ts";

export type { Logger };

/** One structured logger shape for every service; headers that carry keys are never written. */
export function createLogger(name: string, level: Config["LOG_LEVEL"]): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        "req.headers['x-api-key']",
        "req.headers.authorization",
        "req.headers.cookie",
        "headers['x-api-key']",
        "headers.authorization",
        "apiKey",
        "key",
      ],
      censor: "[redacted]",
    },
  });
}
