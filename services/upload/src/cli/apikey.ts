import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "@app/platform";
import { createApiKey } from "../adapters/api-keys.ts";

/** `pnpm apikey create --label NAME`: prints a new key once and appends its hash to the key file. */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { label: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help || positionals[0] !== "create" || !values.label) {
    process.stderr.write("usage: pnpm apikey create --label NAME\n");
    return values.help ? 0 : 2;
  }
  const config = loadConfig();
  const file = config.API_KEYS_FILE ?? join(config.DATA_DIR, "api-keys.txt");
  const key = await createApiKey(file, values.label);
  process.stderr.write(`added key "${values.label}" to ${file}; it is shown once, store it now:\n`);
  process.stdout.write(`${key}\n`);
  return 0;
}

main(process.argv.slice(2).filter((a) => a !== "--")).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
