import { afterAll } from "vitest";
import { BullMqJobQueue } from "../src/index.ts";
import { describeJobQueueConformance } from "./job-queue-conformance.ts";
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from "@app/testkit/redis";

const prefixes: string[] = [];
afterAll(() => deleteKeys(prefixes));

describeJobQueueConformance("bullmq on the real Redis", (opts) => {
  const prefix = uniquePrefix("conformance");
  prefixes.push(prefix);
  return new BullMqJobQueue({ redisUrl: TEST_REDIS_URL, prefix, ...opts });
});
