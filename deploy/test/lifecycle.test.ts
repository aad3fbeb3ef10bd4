import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "@app/platform";
import { isRecord, readRepoFile, readYaml, readYamlDocs, repoRoot } from "./support.ts";

/**
 * Upload temporaries are swept at start only once they are older than TEMP_MAX_AGE_MS (replicas
 * share the bucket), and a multipart upload cut off by a crash is no object at all: the bucket's
 * lifecycle rules are what removes both in the end. Every place that creates the bucket sets them.
 */
interface Rule {
  Status?: string;
  Filter?: { Prefix?: string };
  Expiration?: { Days?: number };
  AbortIncompleteMultipartUpload?: { DaysAfterInitiation?: number };
}

const DAY_MS = 24 * 60 * 60 * 1000;
const tempMaxAge = loadConfig({}).TEMP_MAX_AGE_MS;

function expiresTemporaries(rules: Rule[]): void {
  const tmp = rules.find((r) => r.Filter?.Prefix === "tmp/" && r.Expiration?.Days !== undefined);
  expect(tmp, "a rule expiring tmp/").toBeDefined();
  expect(tmp!.Status).toBe("Enabled");
  // Never sooner than the start-up sweep would: a younger temporary may be a replica's upload.
  expect(tmp!.Expiration!.Days! * DAY_MS).toBeGreaterThanOrEqual(tempMaxAge);
  // Nothing else in the bucket expires.
  for (const r of rules.filter((r) => r.Expiration)) expect(r.Filter?.Prefix).toBe("tmp/");
}

/** The JSON a shell command pipes into `mc ilm import`. */
function importedRules(command: string): Rule[] {
  const m = /echo '(\{.*\})' \| mc .*ilm import/.exec(command);
  expect(m, command).not.toBeNull();
  return (JSON.parse(m![1]!) as { Rules: Rule[] }).Rules;
}

describe("bucket lifecycle rules", () => {
  it("deploy/s3-lifecycle.json (AWS S3) expires tmp/ and aborts abandoned multipart uploads", () => {
    const rules = (JSON.parse(readRepoFile("deploy/s3-lifecycle.json")) as { Rules: Rule[] }).Rules;
    expiresTemporaries(rules);
    const abort = rules.find((r) => r.AbortIncompleteMultipartUpload);
    expect(abort?.Status).toBe("Enabled");
    expect(abort!.AbortIncompleteMultipartUpload!.DaysAfterInitiation! * DAY_MS).toBeGreaterThanOrEqual(tempMaxAge);
  });

  it("compose's minio-init sets the tmp/ rule on the bucket it creates", () => {
    const compose = readYaml(join(repoRoot, "docker-compose.yml")) as { services: Record<string, { command?: string[] }> };
    expiresTemporaries(importedRules(compose.services["minio-init"]!.command!.join(" ")));
  });

  it("the example overlay's bucket Job sets the tmp/ rule on the bucket it creates", () => {
    const [job] = readYamlDocs(join(repoRoot, "deploy/overlays/example/minio-bucket-job.yaml"));
    const spec = isRecord(job) ? (job as { spec: { template: { spec: { containers: { args: string[] }[] } } } }).spec : null;
    expiresTemporaries(importedRules(spec!.template.spec.containers[0]!.args.join(" ")));
  });
});
