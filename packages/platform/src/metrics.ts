import type { Request, Response } from "express";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * One Prometheus registry per process. In embedded mode every service shares it, so the
 * gateway's /metrics shows the whole stack; each standalone service serves its own.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const metrics = {
  httpRequests: new Counter({
    name: "http_requests_total",
    help: "HTTP requests by service, route and status",
    labelNames: ["service", "route", "method", "status"] as const,
    registers: [registry],
  }),
  httpDuration: new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by service, route and status",
    labelNames: ["service", "route", "method", "status"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  }),
  uploadBytes: new Counter({
    name: "upload_bytes_total",
    help: "Bytes received in upload image parts",
    registers: [registry],
  }),
  dedupHits: new Counter({
    name: "upload_dedup_hits_total",
    help: "Uploads whose content was already stored (nothing written)",
    registers: [registry],
  }),
  uploadsStored: new Counter({
    name: "upload_objects_created_total",
    help: "Uploads that stored new content",
    registers: [registry],
  }),
  jobs: new Counter({
    name: "jobs_total",
    help: "Jobs finished, by name and outcome",
    labelNames: ["name", "outcome"] as const,
    registers: [registry],
  }),
  jobDuration: new Histogram({
    name: "job_duration_seconds",
    help: "Job run time by name",
    labelNames: ["name"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  }),
  indexSize: new Gauge({
    name: "search_index_documents",
    help: "Documents in the serving search index",
    registers: [registry],
  }),
};

export async function metricsHandler(_req: Request, res: Response): Promise<void> {
  res.setHeader("content-type", registry.contentType);
  res.end(await registry.metrics());
}

/**
 * A counter whose values are kept elsewhere as plain integers (a hot path cannot afford
 * prom-client's label hashing per increment) and read at each scrape. Registered once per
 * name: a second call, from a second router in the same process, adds nothing.
 */
export function registerCollectedCounter<L extends string>(opts: {
  name: string;
  help: string;
  labelNames: readonly L[];
  read: () => Iterable<{ labels: Record<L, string>; value: number }>;
}): void {
  if (registry.getSingleMetric(opts.name)) return;
  new Counter({
    name: opts.name,
    help: opts.help,
    labelNames: opts.labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, value } of opts.read()) this.inc(labels, value);
    },
  });
}
