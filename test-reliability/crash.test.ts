import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blake3Hex, KEY, misnamedObjects, pool, readStore, upload, view } from "@app/testkit/assets";
import { record } from "@app/testkit/figures";
import { SCRIPTS, sleep, startService, tempDir, type Service } from "@app/testkit/processes";
import { noiseImage } from "@app/testkit/png";

/**
 * The upload service (its own process) killed with SIGKILL in the middle of uploads, 20 times
 * at random points, and started again on the same DATA_DIR each time. After every restart:
 * no temporary survives the start-up sweep, no object sits under a hash name its bytes do not
 * hash to, and every upload that was answered 200 reads back byte for byte.
 */
const ROUNDS = 20;
const UPLOADERS = 6;
let dataDir: string;
let svc: Service | undefined;

beforeAll(async () => {
  dataDir = await tempDir("crash");
});
afterAll(async () => {
  await svc?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const start = () => startService(SCRIPTS.upload, { DATA_DIR: dataDir, API_KEYS: KEY });

/** What must hold after every restart. */
async function audit(base: string, acknowledged: Map<string, Buffer>): Promise<void> {
  const store = await readStore(dataDir);
  expect(store.temporaries, "temporaries after the start-up sweep").toEqual([]);
  expect(store.partials).toEqual([]);
  expect(store.strays).toEqual([]);
  expect(await misnamedObjects(store)).toEqual([]);
  for (const path of store.records.values()) expect(() => JSON.parse(text(path)), path).not.toThrow();
  await pool(acknowledged.size, 8, async (i) => {
    const [name, bytes] = [...acknowledged.entries()][i]!;
    const r = await view(base, name);
    expect(r.status, name).toBe(200);
    expect(r.bytes.equals(bytes), name).toBe(true);
    expect(store.records.has(name.split(".")[0]!), `record of ${name}`).toBe(true);
  });
}

const text = (path: string) => readFileSync(path, "utf8");

describe("the upload service killed mid-upload", () => {
  it(`SIGKILL at random points ${ROUNDS} times: nothing torn, nothing temporary, nothing acknowledged lost`, async () => {
    // Fresh content for every round, small and large (large ones are mid-write when the kill lands).
    const rounds = await pool(ROUNDS, 2, async (r) =>
      Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? noiseImage(700 + r, 700 + i, "png") : noiseImage(40 + i, 40 + r, "png"))),
      ),
    );
    const acknowledged = new Map<string, Buffer>();
    let interrupted = 0;
    let sweptReported = 0;

    for (let round = 0; round < ROUNDS; round++) {
      svc = await start();
      sweptReported += svc.output.filter((l) => l.includes("removed temporaries left by an earlier crash")).length;
      await audit(svc.url, acknowledged);

      const images = rounds[round]!;
      let stop = false;
      const uploaders = Array.from({ length: UPLOADERS }, async (_, u) => {
        for (let n = 0; !stop && n < 200; n++) {
          const image = images[(u + n * UPLOADERS) % images.length]!;
          try {
            const a = await upload(svc!.url, image, { timeoutMs: 20_000 });
            if (a.status === 200) {
              expect(a.body.name).toBe(`${blake3Hex(image)}.png`);
              acknowledged.set(a.body.name as string, image);
            } else {
              throw new Error(`unexpected ${a.status} ${JSON.stringify(a.body)}`);
            }
          } catch (err) {
            if (!stop) throw err;
            interrupted++;
            return;
          }
        }
      });
      await sleep(150 + Math.random() * 1200);
      stop = true;
      await svc.kill("SIGKILL");
      await Promise.all(uploaders);
    }

    svc = await start();
    await audit(svc.url, acknowledged);
    await svc.stop();
    expect(acknowledged.size).toBeGreaterThan(ROUNDS);
    record("crash", {
      rounds: ROUNDS,
      acknowledged: acknowledged.size,
      interruptedUploads: interrupted,
      restartsThatSweptTemporaries: sweptReported,
    });
  });
});
