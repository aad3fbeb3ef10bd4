import { postFile as postBigFile } from "./lib/big-file-post.ts";
import { median, peakRssMiB, perSink, round2 as round, withUploadRig } from "./lib/upload-rig.ts";
import { SINK_DOES, SINK_DURABILITIES, type SinkDurability } from "./lib/upload-sinks.ts";
import { figure, runWhenMain, type Figure } from "./lib/results.ts";
import { testEnv } from "@app/testkit/env";

/**
 * `POST /api/assets` with a 1 GiB file (a model's size) through the real gateway (its own
 * process, embedded upload service, filesystem store on this machine's disk), in MB/s against
 * three bare sinks of increasing durability (bench/lib/upload-sinks.ts: hash only; hash and
 * write; hash, write and sync before answering), rounds alternating all of them. The service
 * syncs new content before it answers, so the `sync` sink is its like and the goal (>= 0.9)
 * is against it. Also the same bytes again (known content: nothing written under a hash name)
 * and the gateway's peak RSS (VmHWM), which must not grow with the file. ASSET_BENCH_MIB sets
 * the size, ASSET_BENCH_ROUNDS the rounds.
 */
type Round = Record<SinkDurability, number> & { newContent: number; knownContent: number };

export interface AssetUploadFigures {
  fileMiB: number;
  baselines: typeof SINK_DOES;
  rounds: Round[];
  /** Medians over the rounds, MB/s. */
  mbps: Round;
  /** Medians of each round's service / sink ratio. */
  newContentRatio: Record<SinkDurability, number>;
  knownContentRatio: Record<SinkDurability, number>;
  gatewayPeakRssMiB: number;
  figures: Figure[];
  summary: string[];
}

const KEY = "bench-asset-upload-key";

export async function run(): Promise<AssetUploadFigures> {
  const mib = testEnv.ASSET_BENCH_MIB;
  const roundCount = testEnv.ASSET_BENCH_ROUNDS;
  return withUploadRig(KEY, async ({ sinks, gateway }) => {
    const rounds: Round[] = [];
    for (let r = 0; r < roundCount; r++) {
      const seed = `${Date.now()}-${r}`;
      const sinkMBps = {} as Record<SinkDurability, number>;
      for (const d of SINK_DURABILITIES) sinkMBps[d] = round((await postBigFile(sinks[d].url, "/", mib, seed, KEY)).mbps);
      const newContent = round((await postBigFile(gateway.url, "/api/assets", mib, seed, KEY)).mbps);
      const knownContent = round((await postBigFile(gateway.url, "/api/assets", mib, seed, KEY)).mbps);
      rounds.push({ ...sinkMBps, newContent, knownContent });
    }
    const mbps = {
      ...perSink((d) => median(rounds.map((x) => x[d]))),
      newContent: median(rounds.map((x) => x.newContent)),
      knownContent: median(rounds.map((x) => x.knownContent)),
    };
    const figures = {
      fileMiB: mib,
      baselines: SINK_DOES,
      rounds,
      mbps,
      newContentRatio: perSink((d) => median(rounds.map((x) => x.newContent / x[d]))),
      knownContentRatio: perSink((d) => median(rounds.map((x) => x.knownContent / x[d]))),
      gatewayPeakRssMiB: round(peakRssMiB(gateway.pid)),
    };
    return {
      ...figures,
      figures: [
        figure(`POST /api/assets, ${mib} MiB new content`, mbps.newContent, "MB/s", {
          baseline: ["hash+write+sync sink", mbps.sync],
          ratio: figures.newContentRatio.sync,
          goal: "ratio ≥ 0.9",
        }),
        figure(`POST /api/assets, ${mib} MiB: gateway peak RSS`, figures.gatewayPeakRssMiB, "MiB", { goal: "≤ 300 MiB" }),
      ],
      summary: [
        `POST /api/assets, ${mib} MiB file: ${mbps.newContent} MB/s new = ${figures.newContentRatio.sync} of the hash+write+sync sink (${mbps.sync} MB/s; goal >= 0.9), ` +
          `${figures.newContentRatio.write} of hash+write (${mbps.write}), ${figures.newContentRatio.hash} of hash only (${mbps.hash}); ` +
          `${mbps.knownContent} MB/s known content; gateway peak RSS ${figures.gatewayPeakRssMiB} MiB (goal <= 300)`,
      ],
    };
  });
}

await runWhenMain(import.meta.url, () => run());
