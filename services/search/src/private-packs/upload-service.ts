import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { BlobStore } from "@app/blobs";
import type { Logger } from "@app/platform";
import { archiveSidecar } from "../adapters/archives/archive-blobs.ts";
import { inspectZip, type ZipLimits } from "./archive/inspect-zip.ts";
import { nodeClassesOf } from "./archive/node-classes.ts";
import { receiveBody, type BodyLimits } from "./archive/receive-body.ts";
import { scanArchive } from "./archive/scan.ts";
import { digestOf } from "./domain/secrets.ts";
import { refusal } from "./publish-service.ts";
import type { PrivatePackRepository, PrivateVersionRow } from "./store/private-pack-repository.ts";

export interface UploadSettings {
  body: BodyLimits;
  zip: ZipLimits;
  scanCommand?: string;
  /** Where an archive waits while it arrives and is checked (under DATA_DIR). */
  incomingDir: string;
}

export type PackBlobs = Pick<BlobStore, "stage">;

/**
 * `PUT <signedUrl>`: the archive arrives into a temporary file (streamed, limited), is checked,
 * read for its node classes, stored in the blob store, scanned, and only then is the version
 * written, with its node, in one transaction. A refusal at any step leaves no version and no
 * file; the grant is spent as the upload starts, so a URL serves one upload.
 */
export class UploadService {
  constructor(
    private readonly repo: PrivatePackRepository,
    private readonly blobs: PackBlobs,
    private readonly settings: UploadSettings,
    private readonly logger: Logger,
    private readonly onPublished?: () => Promise<void>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async receive(
    req: IncomingMessage,
    target: { publisherId: string; nodeId: string; version: string },
    signature: string,
  ): Promise<PrivateVersionRow> {
    const grant = signature ? await this.repo.takeGrant(digestOf(signature)) : null;
    if (!grant) throw refusal(403, "the upload URL is unknown or was already used; run the publish again for a new one");
    if (Date.parse(grant.expiresAt) <= this.now().getTime())
      throw refusal(403, "the upload URL has expired; run the publish again for a new one");
    const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
    if (!same(grant.publisherId, target.publisherId) || !same(grant.nodeId, target.nodeId) || grant.version !== target.version) {
      throw refusal(403, "the upload URL was signed for another publisher, node or version");
    }

    await mkdir(this.settings.incomingDir, { recursive: true });
    const file = join(this.settings.incomingDir, `${randomUUID()}.zip`);
    try {
      const size = await receiveBody(req, file, this.settings.body);
      const contents = await inspectZip(file, size, this.settings.zip);
      const sha256 = await sha256Of(file);
      const staged = await this.blobs.stage(createReadStream(file));
      await staged.commit(archiveSidecar(staged.hash, staged.size));
      const scan = this.settings.scanCommand ? await scanArchive(this.settings.scanCommand, file) : null;
      const answered = grant.request.node_version;
      const now = this.now().toISOString();
      const version: PrivateVersionRow = {
        nodeId: grant.nodeId,
        version: grant.version,
        id: String(answered.id),
        status: scan?.flagged ? "NodeVersionStatusFlagged" : String(answered.status),
        statusReason: scan?.flagged ? scan.output : "",
        deprecated: false,
        fields: { ...answered, archive_sha256: sha256 },
        archiveHash: staged.hash,
        archiveSize: staged.size,
        classes: nodeClassesOf(contents.pythonFiles),
        createdAt: now,
      };
      const outcome = await this.repo.publish(
        {
          id: grant.nodeId,
          publisherId: grant.publisherId,
          status: "NodeStatusActive",
          fields: grant.request.node,
          createdAt: now,
          updatedAt: now,
        },
        version,
      );
      if (outcome === "version-exists") throw refusal(400, "The node version already exists");
      if (outcome === "node-taken") throw refusal(403, "Permission denied");
      await this.onPublished?.();
      this.logger.info(
        {
          node: grant.nodeId,
          version: grant.version,
          publisher: grant.publisherId,
          status: version.status,
          classes: version.classes.length,
        },
        "private pack version published",
      );
      return version;
    } finally {
      await rm(file, { force: true });
    }
  }
}

/** Base64 SHA-256 of a file, as `Repr-Digest` carries it. */
async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("base64");
}
