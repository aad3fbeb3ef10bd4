import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startService, type Service } from "@app/testkit/processes";
import { SINK_DURABILITIES, startSink, type SinkDurability } from "./upload-sinks.ts";

/** What an upload bench measures against: the three sinks and the real gateway (embedded upload service, filesystem store), each its own process. */
export interface UploadRig {
  sinks: Record<SinkDurability, Service>;
  gateway: Service;
}

/** Start the rig over a fresh DATA_DIR accepting `key`, run `fn`, and stop it all (the gateway's last output printed if `fn` fails). */
export async function withUploadRig<T>(key: string, fn: (rig: UploadRig) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-upload-rig-"));
  const sinks: Partial<Record<SinkDurability, Service>> = {};
  let gateway: Service | undefined;
  try {
    for (const d of SINK_DURABILITIES) sinks[d] = await startSink(d);
    gateway = await startService(
      join(repoRoot, "services/gateway/src/main.ts"),
      { DATA_DIR: dataDir, API_KEYS: key },
      { readyPath: "/readyz" },
    );
    return await fn({ sinks: sinks as Record<SinkDurability, Service>, gateway });
  } catch (err) {
    if (gateway) console.error(gateway.output.slice(-20).join("\n"));
    throw err;
  } finally {
    await gateway?.stop();
    for (const s of Object.values(sinks)) await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A process's peak resident set (VmHWM), MiB. */
export const peakRssMiB = (pid: number): number =>
  Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
export const round2 = (x: number): number => Math.round(x * 100) / 100;
export const median = (xs: number[]): number => round2([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
export const perSink = (f: (d: SinkDurability) => number): Record<SinkDurability, number> =>
  Object.fromEntries(SINK_DURABILITIES.map((d) => [d, f(d)])) as Record<SinkDurability, number>;
