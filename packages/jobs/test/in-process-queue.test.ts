import { InProcessJobQueue } from "../src/index.ts";
import { describeJobQueueConformance } from "./job-queue-conformance.ts";

describeJobQueueConformance("in-process", (opts) => new InProcessJobQueue(opts));
