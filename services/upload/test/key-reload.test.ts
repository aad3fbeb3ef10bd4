import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { runScript, SCRIPTS, sleep, startService, type Service } from "@app/testkit/processes";
import { createApiKey, digestKey } from "../src/adapters/keys/api-keys.ts";
import { ReloadingApiKeys } from "../src/adapters/keys/reloading-api-keys.ts";

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Poll until `check` holds (the server reloads on its own schedule); fails after a generous deadline, never asserts a duration. */
async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await sleep(50);
  }
}

describe("the key file is read again while the server runs", () => {
  it("a key from `pnpm apikey create` works without a restart; a revoked key stops working; a malformed file keeps the keys", async () => {
    const dir = await mkdtemp(join(tmpdir(), "key-reload-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const keyFile = join(dir, "keys", "api-keys.txt"); // not there yet when the server starts
    const env = { DATA_DIR: join(dir, "data"), API_KEYS_FILE: keyFile, LOG_LEVEL: "info" };
    const svc: Service = await startService(SCRIPTS.upload, env);
    cleanup.push(() => svc.stop());
    const status = async (key: string) =>
      (await fetch(`${svc.url}/api/view?filename=${"a".repeat(64)}.png`, { headers: { "X-API-Key": key } })).status;

    const apikey = async (...args: string[]) => {
      const run = await runScript(SCRIPTS.apikey, args, env);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout.trim();
    };
    const first = await apikey("create", "--label", "new laptop");
    const second = await apikey("create", "--label", "ci runner", "--limits", "upload_rpm=30");
    await eventually("the created keys are accepted", async () => (await status(first)) === 404 && (await status(second)) === 404);

    await apikey("revoke", "--label", "new laptop");
    await eventually("the revoked key is refused", async () => (await status(first)) === 401);
    expect(await status(second)).toBe(404);

    const logged = svc.output.length;
    await appendFile(keyFile, "sha256:not-a-digest half written\n");
    await eventually("the malformed file is reported", async () =>
      svc.output.slice(logged).some((l) => l.includes("key file not reloaded (malformed)")),
    );
    expect(await status(second)).toBe(404);
    expect(await status(first)).toBe(401);
    const all = svc.output.join("\n");
    for (const secret of [first, second]) expect(all).not.toContain(secret);
    expect(all).toContain("ci runner"); // labels are what the log names
  }, 240_000); // a server and three CLI processes, each starting tsx, on a shared machine
});

describe("ReloadingApiKeys", () => {
  it("swaps in the file's keys on reload, keeps API_KEYS, keeps the last good keys over a malformed file, and logs no key", async () => {
    const dir = await mkdtemp(join(tmpdir(), "key-reload-unit-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "api-keys.txt");
    const lines: string[] = [];
    const logger = pino({ level: "info" }, new Writable({ write: (c, _e, done) => (lines.push(String(c)), done()) }));
    const a = await createApiKey(file, "a", { upload_rpm: 5 });
    const keys = await ReloadingApiKeys.open({ file, plaintext: "env-key-0123456789", logger });
    cleanup.push(() => keys.close());
    expect(keys.verify(a)).toMatchObject({ label: "a", limits: { upload_rpm: 5 } });
    expect(keys.verify("env-key-0123456789")?.label).toBe("API_KEYS[0]");

    const b = await createApiKey(file, "b");
    await keys.reload();
    expect(keys.verify(b)?.label).toBe("b");

    await writeFile(file, `sha256:${digestKey(b).toString("hex")} b upload_rpm=fast\n`);
    await keys.reload();
    expect(keys.verify(a)?.label).toBe("a"); // the last good file still counts
    expect(lines.join("")).toMatch(/line 1: upload_rpm must be a whole number.*key file not reloaded \(malformed\)/);

    await rm(file);
    await keys.reload();
    expect(keys.verify(a)).toBeNull();
    expect(keys.verify(b)).toBeNull();
    expect(keys.verify("env-key-0123456789")).not.toBeNull();
    for (const secret of [a, b, "env-key-0123456789"]) expect(lines.join("")).not.toContain(secret);
  });
});
