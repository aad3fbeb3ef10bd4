import { NodeVersionStatus } from "@app/contracts";
import { PrivatePackError } from "./domain/errors.ts";
import type { Actor } from "./publisher-service.ts";
import type { PrivatePackRepository, PrivateVersionRow } from "./store/private-pack-repository.ts";
import { toNodeVersion } from "./views.ts";

/**
 * What a pack's owner does to its published versions, in the registry's shapes: set a status
 * (`PUT /admin/nodes/{nodeId}/versions/{version}`), deprecate one and delete one (the publisher
 * routes). Only the key that owns the pack's publisher, or an administrator, may.
 */
export class VersionAdminService {
  constructor(
    private readonly repo: PrivatePackRepository,
    private readonly onChange: () => Promise<void>,
  ) {}

  async setStatus(actor: Actor, nodeId: string, version: string, body: unknown): Promise<Record<string, unknown>> {
    const found = await this.owned(actor, nodeId, version);
    const b = (body ?? {}) as Record<string, unknown>;
    const status = NodeVersionStatus.safeParse(b.status);
    if (!status.success) throw new PrivatePackError(400, `status must be one of ${NodeVersionStatus.options.join(", ")}`, "registry");
    const reason = typeof b.status_reason === "string" ? b.status_reason.slice(0, 4000) : "";
    await this.repo.setVersionStatus(found.nodeId, found.version, status.data, reason);
    await this.onChange();
    return toNodeVersion({ ...found, status: status.data, statusReason: reason });
  }

  /** The registry's NodeVersionUpdateRequest: `deprecated` is applied; a changelog is fixed at publish here and refused. */
  async update(
    actor: Actor,
    publisherId: string,
    nodeId: string,
    versionRef: string,
    body: unknown,
  ): Promise<{ changelog: string; deprecated: boolean }> {
    const found = await this.owned(actor, nodeId, versionRef, publisherId);
    const b = (body ?? {}) as Record<string, unknown>;
    if (b.changelog !== undefined)
      throw new PrivatePackError(400, "a private version's changelog is set when it is published, and cannot be changed", "registry");
    if (typeof b.deprecated !== "boolean") throw new PrivatePackError(400, "the body must be {deprecated: true|false}", "registry");
    await this.repo.setDeprecated(found.nodeId, found.version, b.deprecated);
    await this.onChange();
    return { changelog: typeof found.fields.changelog === "string" ? found.fields.changelog : "", deprecated: b.deprecated };
  }

  /** As the registry unpublishes: the version's status becomes Deleted, so no install path takes it; its archive stays for installs pinned to it. */
  async remove(actor: Actor, publisherId: string, nodeId: string, versionRef: string): Promise<void> {
    const found = await this.owned(actor, nodeId, versionRef, publisherId);
    await this.repo.setVersionStatus(found.nodeId, found.version, "NodeVersionStatusDeleted", found.statusReason);
    await this.onChange();
  }

  /** The version by its number or its id, when the actor owns its pack (and the pack is `publisherId`'s, when given). */
  private async owned(actor: Actor, nodeId: string, versionRef: string, publisherId?: string): Promise<PrivateVersionRow> {
    const node = await this.repo.node(nodeId);
    const publisher = node ? await this.repo.publisher(node.publisherId) : null;
    const mine = publisher && (actor === "admin" || publisher.owner === actor.owner);
    if (!node || !mine) throw new PrivatePackError(404, "Not Found", "registry");
    if (publisherId !== undefined && publisherId.toLowerCase() !== node.publisherId.toLowerCase())
      throw new PrivatePackError(403, "Version does not belong to the publisher", "registry");
    const versions = await this.repo.versions(node.id);
    const found = versions.find((v) => v.version === versionRef || v.id === versionRef);
    if (!found) throw new PrivatePackError(404, "Not Found", "registry");
    return found;
  }
}
