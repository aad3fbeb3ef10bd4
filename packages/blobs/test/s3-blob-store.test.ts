import { randomUUID } from "node:crypto";
import { Client } from "minio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3BlobStore } from "../src/s3-blob-store.ts";
import { describeBlobStoreConformance } from "./blob-store-conformance.ts";
import { startS3, type RunningS3 } from "@app/testkit/s3rver";

let s3: RunningS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.stop();
});

describeBlobStoreConformance("S3 (s3rver)", async () => {
  const bucket = `t-${randomUUID().slice(0, 8)}`;
  // A small part size, so the multipart path runs on the suite's few-MiB objects.
  const options = {
    endPoint: "127.0.0.1",
    port: s3.port,
    useSSL: false,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    region: "us-east-1",
    bucket,
    partSize: 5 * 1024 * 1024,
  };
  const store = new S3BlobStore(options);
  const client = new Client({
    endPoint: "127.0.0.1",
    port: s3.port,
    useSSL: false,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    pathStyle: true,
  });
  return {
    store,
    temporaries: () => store.temporaries(),
    plantTemporary: async (name) => {
      await client.putObject(bucket, `tmp/${name}`, Buffer.from("partial"));
    },
    sibling: ({ tempMaxAgeMs }) => new S3BlobStore({ ...options, tempMaxAgeMs }),
    cleanup: async () => {
      const keys = await new Promise<string[]>((resolve, reject) => {
        const out: string[] = [];
        const s = client.listObjectsV2(bucket, "", true);
        s.on("data", (i) => i.name && out.push(i.name));
        s.on("error", reject);
        s.on("end", () => resolve(out));
      });
      if (keys.length) await client.removeObjects(bucket, keys);
      await client.removeBucket(bucket);
    },
  };
});

describe("S3 store start-up", () => {
  it("several processes starting at once on a missing bucket all come up (one creates it, the others find it)", async () => {
    const bucket = `race-${randomUUID().slice(0, 8)}`;
    const stores = Array.from(
      { length: 6 },
      () =>
        new S3BlobStore({
          endPoint: "127.0.0.1",
          port: s3.port,
          useSSL: false,
          accessKey: s3.accessKey,
          secretKey: s3.secretKey,
          region: "us-east-1",
          bucket,
        }),
    );
    await expect(Promise.all(stores.map((st) => st.init()))).resolves.toHaveLength(6);
    const client = new Client({
      endPoint: "127.0.0.1",
      port: s3.port,
      useSSL: false,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      pathStyle: true,
    });
    expect(await client.bucketExists(bucket)).toBe(true);
    await client.removeBucket(bucket);
  });
});
