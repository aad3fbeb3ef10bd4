import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { ClientRequest } from "node:http";
import type { Service } from "@app/testkit/processes";
import { sendBody } from "./lib/multipart-post.ts";
import { median, peakRssMiB, perSink, round2, withUploadRig } from "./lib/upload-rig.ts";
import { SINK_DOES, SINK_DURABILITIES, type SinkDurability } from "./lib/upload-sinks.ts";
import { figure, runWhenMain } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

/**
 * A tus upload of 1 GiB (`/api/assets/uploads`: create, then one PATCH with every byte, whose
 * answer comes once the asset is made) through the real gateway (its own process, embedded
 * upload service, filesystem store), in MB/s against the bare sinks of bench/lib/upload-sinks.ts
 * taking the same bytes in one PATCH, rounds alternating them. The service hashes, writes and
 * syncs before it answers, so the `sync` sink is its like; the goal (>= 0.7) is against it.
 * TUS_BENCH_MIB sets the size, TUS_BENCH_ROUNDS the rounds.
 */
type Round = Record<SinkDurability, number> & { tus: number };

const KEY = "bench-tus-upload-key";
const MiB = 1024 * 1024;

/** Sends `mib` MiB of `seed`-distinct bytes (each MiB starts with the seed and its index), never held whole. */
async function writeSeeded(req: ClientRequest, mib: number, seed: string): Promise<void> {
  const block = randomBytes(MiB);
  for (let i = 0; i < mib; i++) {
    const chunk = Buffer.from(block);
    chunk.write(`${seed}:${i}`, 0, "latin1");
    if (!req.write(chunk)) await once(req, "drain");
  }
  req.end();
}

function patch(url: string, path: string, mib: number, seed: string, headers: Record<string, string>) {
  return sendBody(
    url,
    path,
    "PATCH",
    { ...headers, "content-type": "application/offset+octet-stream", "content-length": mib * MiB },
    (req) => void writeSeeded(req, mib, seed),
  );
}

/** The sink takes the PATCH alone; MB/s. */
async function toSink(sink: Service, mib: number, seed: string): Promise<number> {
  const started = performance.now();
  const res = await patch(sink.url, "/", mib, seed, {});
  if (res.status >= 300) throw new Error(`sink answered ${res.status}`);
  return (mib * MiB) / 1e6 / ((performance.now() - started) / 1000);
}

/** Create, then PATCH every byte; MB/s from the creation to the answer that carries the asset. */
async function toTus(gateway: Service, mib: number, seed: string): Promise<number> {
  const tus = { "x-api-key": KEY, "tus-resumable": "1.0.0" };
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const started = performance.now();
  const created = await fetch(`${gateway.url}/api/assets/uploads`, {
    method: "POST",
    headers: {
      ...tus,
      "upload-length": String(mib * MiB),
      "upload-metadata": `filename ${b64("model.safetensors")},tags ${b64("models,model_type:checkpoints,bench")}`,
    },
  });
  const location = created.headers.get("location");
  if (created.status !== 201 || !location) throw new Error(`create answered ${created.status}: ${await created.text()}`);
  const res = await patch(gateway.url, location, mib, seed, { ...tus, "upload-offset": "0" });
  if (res.status !== 204 || !res.headers["asset-id"]) throw new Error(`PATCH answered ${res.status} without Asset-Id: ${res.body}`);
  return (mib * MiB) / 1e6 / ((performance.now() - started) / 1000);
}

export async function run() {
  const mib = testEnv.TUS_BENCH_MIB;
  const roundCount = testEnv.TUS_BENCH_ROUNDS;
  return withUploadRig(KEY, async ({ sinks, gateway }) => {
    const rounds: Round[] = [];
    for (let r = 0; r < roundCount; r++) {
      const seed = `${Date.now()}-${r}`;
      const sinkMBps = perSink(() => 0);
      for (const d of SINK_DURABILITIES) sinkMBps[d] = round2(await toSink(sinks[d], mib, seed));
      rounds.push({ ...sinkMBps, tus: round2(await toTus(gateway, mib, seed)) });
    }
    const mbps = { ...perSink((d) => median(rounds.map((x) => x[d]))), tus: median(rounds.map((x) => x.tus)) };
    const ratio = perSink((d) => median(rounds.map((x) => x.tus / x[d])));
    const gatewayPeakRssMiB = round2(peakRssMiB(gateway.pid));
    return {
      fileMiB: mib,
      baselines: SINK_DOES,
      rounds,
      mbps,
      ratio,
      gatewayPeakRssMiB,
      figures: [
        figure(`tus, ${mib} MiB in one PATCH`, mbps.tus, "MB/s", {
          baseline: ["hash+write+sync sink", mbps.sync],
          ratio: ratio.sync,
          goal: "ratio ≥ 0.7",
        }),
      ],
      summary: [
        `tus upload (/api/assets/uploads, create + one PATCH), ${mib} MiB: ${mbps.tus} MB/s = ${ratio.sync} of the hash+write+sync sink (${mbps.sync} MB/s; goal >= 0.7), ` +
          `${ratio.write} of hash+write (${mbps.write}), ${ratio.hash} of hash only (${mbps.hash}); gateway peak RSS ${gatewayPeakRssMiB} MiB`,
      ],
    };
  });
}

await runWhenMain(import.meta.url, () => run());
