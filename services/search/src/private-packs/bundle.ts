import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { Logger } from "@app/platform";
import { isNodeId, isPublisherId } from "./domain/ids.ts";
import type { PrivatePackRepository } from "./store/private-pack-repository.ts";

/**
 * Private packs in a mirror bundle (`private-packs.ndjson`): one pack a line, with its publisher
 * and every version; their archives travel as the bundle's `blobs/<blake3>`. Tokens and owners
 * stay behind: on the closed side the packs belong to publishers owned by `bundle`, whom an
 * administrator hands on with `pnpm publisher` if anyone there is to publish under them.
 */
const Version = z.object({
  version: z.string().min(1).max(100),
  id: z.string().min(1).max(100),
  status: z.string().max(100),
  statusReason: z.string(),
  deprecated: z.boolean(),
  fields: z.record(z.string(), z.unknown()),
  archiveHash: z.string().regex(/^[0-9a-f]{64}$/),
  archiveSize: z.number().int().nonnegative(),
  classes: z.array(z.string()),
  createdAt: z.string(),
});
const PackLine = z.object({
  publisher: z.object({ id: z.string().refine(isPublisherId), name: z.string(), status: z.string(), createdAt: z.string() }),
  node: z.object({
    id: z.string().refine(isNodeId),
    status: z.string(),
    fields: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
  versions: z.array(Version),
});

export const PRIVATE_PACKS_FILE = "private-packs.ndjson";

/** Every private pack as bundle lines, and the archives they need. */
export async function exportPrivatePacks(repo: PrivatePackRepository): Promise<{ text: string; packs: number; blobs: Set<string> }> {
  const lines: string[] = [];
  const blobs = new Set<string>();
  for (const node of await repo.nodes()) {
    const publisher = await repo.publisher(node.publisherId);
    if (!publisher) continue;
    const versions = (await repo.versions(node.id)).map(({ nodeId: _node, ...v }) => v);
    for (const v of versions) blobs.add(v.archiveHash);
    const { publisherId: _publisher, ...rest } = node;
    lines.push(
      `${JSON.stringify({ publisher: { id: publisher.id, name: publisher.name, status: publisher.status, createdAt: publisher.createdAt }, node: rest, versions })}\n`,
    );
  }
  return { text: lines.join(""), packs: lines.length, blobs };
}

/**
 * The packs a bundle carried, added to this instance's database: what is here already stays (a
 * version is never replaced), a version whose archive the blob store lacks is skipped and logged.
 */
export async function importPrivatePacks(
  file: string,
  repo: PrivatePackRepository,
  hasBlob: (hash: string) => Promise<boolean>,
  logger: Logger,
): Promise<number> {
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : Promise.reject(err)));
  if (text === null) return 0;
  let added = 0;
  for (const [i, raw] of text.split("\n").entries()) {
    if (raw.trim() === "") continue;
    const line = PackLine.safeParse(JSON.parse(raw));
    if (!line.success) {
      logger.warn({ file, line: i + 1, reason: line.error.issues[0]?.message }, "a private pack in the bundle was skipped");
      continue;
    }
    const { publisher, node, versions } = line.data;
    await repo.createPublisher({ ...publisher, owner: "bundle" });
    for (const v of versions) {
      if (!(await hasBlob(v.archiveHash))) {
        logger.warn({ node: node.id, version: v.version }, "the bundle carried no archive for a private version: skipped");
        continue;
      }
      const outcome = await repo.publish({ ...node, publisherId: publisher.id }, { ...v, nodeId: node.id });
      if (outcome === "published") added++;
      else if (outcome === "node-taken")
        logger.warn({ node: node.id }, "a private pack in the bundle has the id of another publisher's pack here: skipped");
    }
  }
  return added;
}
