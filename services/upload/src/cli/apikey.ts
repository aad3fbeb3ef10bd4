import { parseArgs } from "node:util";
import { loadConfig } from "@app/platform";
import { createApiKey, keyFilePath, readKeyFile, revokeApiKeys, rotateApiKey } from "../adapters/keys/api-keys.ts";
import { formatKeyLimits, parseKeyLimits } from "../domain/key-limits.ts";

const USAGE = `usage:
  pnpm apikey create --label NAME [--limits "upload_rpm=60 upload_mbpm=512 assets_rpm=600"]
  pnpm apikey revoke --label NAME
  pnpm apikey rotate --label NAME   (a new key for the same label: the same owner of asset records; the old key stops working)
  pnpm apikey list
A running server reads the key file again when it changes: no restart.
`;

/** Prints a new key once and appends only its hash to the key file; revokes and lists by label. */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { label: { type: "string" }, limits: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  const command = positionals[0];
  if (values.help || !command || (command !== "list" && !values.label)) {
    process.stderr.write(USAGE);
    return values.help ? 0 : 2;
  }
  const file = keyFilePath(loadConfig());
  switch (command) {
    case "create": {
      const limits = parseKeyLimits((values.limits ?? "").split(/\s+/).filter((w) => w !== ""));
      const key = await createApiKey(file, values.label!, limits);
      process.stderr.write(`added key "${values.label}" to ${file}; it is shown once, store it now:\n`);
      process.stdout.write(`${key}\n`);
      return 0;
    }
    case "revoke": {
      const removed = await revokeApiKeys(file, values.label!);
      process.stderr.write(`removed ${removed} key(s) labelled "${values.label}" from ${file}\n`);
      return removed > 0 ? 0 : 1;
    }
    case "rotate": {
      const key = await rotateApiKey(file, values.label!);
      if (key === null) {
        process.stderr.write(`no key labelled "${values.label}" in ${file}\n`);
        return 1;
      }
      process.stderr.write(`replaced the key(s) labelled "${values.label}" in ${file}; the new one is shown once, store it now:\n`);
      process.stdout.write(`${key}\n`);
      return 0;
    }
    case "list":
      for (const e of await readKeyFile(file)) process.stdout.write(`${e.label}\t${formatKeyLimits(e.limits) || "default limits"}\n`);
      return 0;
    default:
      process.stderr.write(USAGE);
      return 2;
  }
}

main(process.argv.slice(2).filter((a) => a !== "--")).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
