import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blake3Hex, KEY, misnamedObjects, pool, readStore, upload, view } from "@app/testkit/assets";
import { SCRIPTS, startService, tempDir, type Service } from "@app/testkit/processes";
import { record } from "@app/testkit/figures";
import { type Ext, noiseImage } from "@app/testkit/png";

/**
 * Load through the gateway on a real port: 1,000 uploads at 50 in flight, a third of them
 * duplicates of other uploads in the batch; then 100 identical uploads of one new image at once.
 * The store is audited from the filesystem afterwards, not through the service.
 */
const EXTS: Ext[] = ["png", "jpg", "webp"];

/** Through the gateway with the upload service mounted in it, or proxying to it in its own process. */
function loadSuite(mode: "embedded" | "proxied"): void {
  let dataDir: string;
  let gw: Service;
  let behind: Service | undefined;

  beforeAll(async () => {
    dataDir = await tempDir(`load-${mode}`);
    if (mode === "embedded") {
      gw = await startService(SCRIPTS.gateway, { DATA_DIR: dataDir, API_KEYS: KEY });
    } else {
      behind = await startService(SCRIPTS.upload, { DATA_DIR: dataDir, API_KEYS: KEY });
      gw = await startService(SCRIPTS.gateway, { DATA_DIR: `${dataDir}-gw`, API_KEYS: KEY, UPLOAD_URL: behind.url });
    }
  });
  afterAll(async () => {
    await gw?.stop();
    await behind?.stop();
    await rm(dataDir, { recursive: true, force: true });
    await rm(`${dataDir}-gw`, { recursive: true, force: true });
  });

  it("1,000 uploads at 50 in flight, a third duplicates: all 200, named by blake3, the store holds exactly the distinct contents", async () => {
    const DISTINCT = 667;
    const TOTAL = 1000;
    const images = await pool(DISTINCT, 4, (i) => noiseImage(24 + (i % 17), 16 + (i % 11), EXTS[i % 3]));
    // Uploads 667..999 repeat earlier images (some several times), shuffled among the rest.
    const plan = Array.from({ length: TOTAL }, (_, i) => (i < DISTINCT ? i : (i * 7919) % DISTINCT));
    for (let i = plan.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [plan[i], plan[j]] = [plan[j]!, plan[i]!];
    }
    const rssBefore = gw.rssKiB();
    const t0 = performance.now();
    const answers = await pool(TOTAL, 50, (i) =>
      upload(gw.url, images[plan[i]!]!, {
        fields: { type: i % 2 ? "input" : "output", subfolder: `load/${i % 5}` },
        filename: `f${i}.png`,
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const rssAfter = gw.rssKiB();

    const failures = answers.map((a, i) => ({ ...a, i })).filter((a) => a.status !== 200);
    expect(failures.slice(0, 5), `${failures.length} uploads failed`).toEqual([]);
    answers.forEach((a, i) => {
      const img = images[plan[i]!]!;
      expect(a.body.name).toBe(`${blake3Hex(img)}.${EXTS[plan[i]! % 3]}`);
    });

    const store = await readStore(dataDir);
    const distinctHashes = new Set(images.map(blake3Hex));
    expect(distinctHashes.size).toBe(DISTINCT);
    expect([...store.blobs.keys()].sort()).toEqual([...distinctHashes].sort());
    expect([...store.records.keys()].sort()).toEqual([...distinctHashes].sort());
    expect(await misnamedObjects(store)).toEqual([]);
    expect(store.temporaries).toEqual([]);
    expect(store.partials).toEqual([]);
    expect(store.strays).toEqual([]);

    // A sample reads back byte for byte.
    for (const idx of [0, 1, 2, 333, 666]) {
      const r = await view(gw.url, `${blake3Hex(images[idx]!)}.${EXTS[idx % 3]}`);
      expect(r.status).toBe(200);
      expect(r.bytes.equals(images[idx]!)).toBe(true);
    }
    record(`load-${mode}`, {
      uploads: TOTAL,
      inFlight: 50,
      distinct: DISTINCT,
      seconds: +seconds.toFixed(2),
      perSecond: Math.round(TOTAL / seconds),
      rssBeforeMiB: +(rssBefore / 1024).toFixed(1),
      rssAfterMiB: +(rssAfter / 1024).toFixed(1),
      ...(behind && { uploadServiceRssAfterMiB: +(behind.rssKiB() / 1024).toFixed(1) }),
    });
  });

  it("100 identical uploads of one new image at once: all 200 with one name, one object, no temporary", async () => {
    const image = await noiseImage(512, 512, "png");
    const hash = blake3Hex(image);
    expect((await readStore(dataDir)).blobs.has(hash)).toBe(false);
    const answers = await pool(100, 100, () => upload(gw.url, image));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
    expect(new Set(answers.map((a) => a.body.name))).toEqual(new Set([`${hash}.png`]));
    const store = await readStore(dataDir);
    expect(store.blobs.has(hash)).toBe(true);
    expect(store.records.has(hash)).toBe(true);
    expect(store.temporaries).toEqual([]);
    expect(await misnamedObjects(store)).toEqual([]);
    const r = await view(gw.url, `${hash}.png`);
    expect(r.bytes.equals(image)).toBe(true);
  });
}

describe("uploads under load through the gateway (upload mounted in it)", () => loadSuite("embedded"));
describe("uploads under load through the gateway (proxying to the upload process)", () => loadSuite("proxied"));
