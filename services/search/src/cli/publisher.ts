import { parseArgs } from "node:util";
import { createLogger, loadConfig } from "@app/platform";
import { createSearchRuntime } from "../compose.ts";
import { engineNamespace } from "../private-packs/engine-namespace.ts";
import { PrivatePackError } from "../private-packs/domain/errors.ts";
import { openPrivatePackStore } from "../private-packs/index.ts";
import { PublisherService } from "../private-packs/publisher-service.ts";
import { VersionAdminService } from "../private-packs/version-admin-service.ts";

const USAGE = `usage:
  pnpm publisher create <id> [--name NAME] --owner LABEL     a publisher owned by the API key labelled LABEL
  pnpm publisher token create <publisher> [--name N] [--description D]   prints the token once
  pnpm publisher token list <publisher>
  pnpm publisher token revoke <publisher> <tokenId>
  pnpm publisher status <nodeId> <version> <NodeVersionStatus…> [--reason TEXT]   as PUT /admin/nodes/{nodeId}/versions/{version}
`;

/**
 * The publisher routes for an administrator at the command line, on the same database as the
 * server (DATA_DIR's SQLite file, or DATABASE_URL). A publisher id the mirrored catalog holds is
 * refused, as the route refuses it: the catalog is read from the snapshot under DATA_DIR (or
 * Meilisearch), never from the network.
 */
const { values, positionals } = parseArgs({
  allowPositionals: true,
  strict: true,
  options: { name: { type: "string" }, description: { type: "string" }, owner: { type: "string" }, reason: { type: "string" } },
});
const config = loadConfig();
const logger = createLogger("publisher", "error");
const repo = await openPrivatePackStore(config);
const fail = (message: string, code = 2): never => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

try {
  const [command, sub, ...rest] = positionals;
  if (command === "create" && sub) {
    if (!values.owner) fail(`--owner is required: the label of the API key that will manage '${sub}'\n${USAGE}`);
    const runtime = await createSearchRuntime({ ...config, CATALOG_SOURCE: { kind: "none" } }, logger);
    await runtime.started;
    try {
      const created = await new PublisherService(repo, engineNamespace(runtime.engine)).create("admin", {
        id: sub,
        name: values.name,
        owner: values.owner,
      });
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } finally {
      await runtime.close();
    }
  } else if (command === "token" && rest[0]) {
    const tokens = new PublisherService(repo, { holdsNode: async () => false, holdsPublisher: async () => false });
    if (sub === "create")
      process.stdout.write(
        `${(await tokens.createToken("admin", rest[0], { name: values.name, description: values.description })).token}\n`,
      );
    else if (sub === "list") process.stdout.write(`${JSON.stringify(await tokens.listTokens("admin", rest[0]), null, 2)}\n`);
    else if (sub === "revoke" && rest[1]) await tokens.revokeToken("admin", rest[0], rest[1]);
    else fail(USAGE);
  } else if (command === "status" && sub && rest[0] && rest[1]) {
    // A running server reads the change within seconds (it polls the database's revision).
    const set = await new VersionAdminService(repo, async () => {}).setStatus("admin", sub, rest[0], {
      status: rest[1],
      status_reason: values.reason ?? "",
    });
    process.stdout.write(`${JSON.stringify(set)}\n`);
  } else {
    fail(USAGE);
  }
} catch (err) {
  if (err instanceof PrivatePackError) fail(err.message, 1);
  throw err;
} finally {
  await repo.close();
}
