import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * The secret `preview_url`s are signed with (domain/signed-view-url.ts): PREVIEW_URL_SECRET, else
 * one made once and kept in `DATA_DIR/preview-url.secret` (mode 0600), so that the URLs outlive a
 * restart and replicas sharing DATA_DIR accept each other's. Two processes starting at once
 * agree: each writes a temporary and links it to the name (link fails when the name exists), so
 * the file appears whole and the loser reads the winner's.
 */
export async function previewUrlSecret(config: { PREVIEW_URL_SECRET?: string; DATA_DIR: string }): Promise<Buffer> {
  if (config.PREVIEW_URL_SECRET) return Buffer.from(config.PREVIEW_URL_SECRET, "utf8");
  const file = join(config.DATA_DIR, "preview-url.secret");
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(tmp, randomBytes(32).toString("hex"), { flag: "wx", mode: 0o600 });
  try {
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    await rm(tmp, { force: true });
  }
  const text = (await readFile(file, "utf8")).trim();
  if (text.length < 32) throw new Error(`${file} holds no secret (delete it to have one made)`);
  return Buffer.from(text, "utf8");
}
