import { pino, type Logger } from "pino";

export type { Logger };

/** One structured logger shape for every service; headers that carry keys are never written. */
export function createLogger(name: string, level = process.env.LOG_LEVEL ?? "info"): Logger {
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
