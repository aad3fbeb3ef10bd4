import { randomUUID } from "node:crypto";
import { archivePath } from "../domain/archive-links.ts";
import { PrivatePackError } from "./domain/errors.ts";
import { isNodeId, NODE_ID_RE } from "./domain/ids.ts";
import type { MirrorNamespace } from "./domain/mirror-namespace.ts";
import { digestOf, matchesAny, newSecret } from "./domain/secrets.ts";
import { normalizeVersion } from "./domain/semver.ts";
import type { PrivatePackRepository } from "./store/private-pack-repository.ts";

export interface PublishSettings {
  /** Versions wait as Pending for an owner to set their status. */
  review: boolean;
  uploadTtlSeconds: number;
}

/** What `comfy node publish` is answered: the version to be, and where to PUT its archive. */
export interface PublishAnswer {
  node_version: Record<string, unknown>;
  signedUrl: string;
}

/** A signed upload URL's secret: the prefix tells it apart from tokens and keys in a leaked log. */
const UPLOAD_SECRET_PREFIX = "cru_";

/** Where a publish's archive is PUT; the signature alone finds the grant, the path must agree with it. */
export function uploadPath(publisherId: string, nodeId: string, version: string): string {
  return `/publishers/${encodeURIComponent(publisherId)}/nodes/${encodeURIComponent(nodeId)}/versions/${encodeURIComponent(version)}/node.zip`;
}

/**
 * `POST /publishers/{publisherId}/nodes/{nodeId}/versions`: registry-backend's checks, in its
 * order and with its messages, then an upload grant. Nothing is published here: the PUT of the
 * archive to `signedUrl` (see UploadService) is what makes the version real.
 */
export class PublishService {
  constructor(
    private readonly repo: PrivatePackRepository,
    private readonly mirror: MirrorNamespace,
    private readonly settings: PublishSettings,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async start(publisherId: string, nodeId: string, body: unknown, base: string): Promise<PublishAnswer> {
    const request = isObject(body) ? body : {};
    const publisher = await this.repo.publisher(publisherId);
    if (publisher?.status === "PublisherStatusBanned") throw refusal(403, "Node Banned");
    const existing = await this.repo.node(nodeId);
    if (existing?.status === "NodeStatusBanned") throw refusal(403, "Node Banned");
    if (existing && existing.publisherId.toLowerCase() !== publisherId.toLowerCase()) throw refusal(403, "Permission denied");
    if (!publisher) throw refusal(400, "Failed to validate token");
    const token = request.personal_access_token;
    if (typeof token !== "string" || !matchesAny(token, await this.repo.tokenDigests(publisher.id)))
      throw refusal(400, "Invalid personal access token");

    const node = isObject(request.node) ? request.node : null;
    const nodeVersion = isObject(request.node_version) ? request.node_version : null;
    if (!node || !nodeVersion) throw refusal(400, "the body must carry node and node_version objects, as comfy node publish sends them");
    if (node.id !== undefined && node.id !== nodeId)
      throw refusal(400, `node.id ${JSON.stringify(node.id)} in the body differs from '${nodeId}' in the path`);
    if (!isNodeId(nodeId)) throw refusal(400, "Failed to create node", `node id must be 1-100 characters matching ${NODE_ID_RE.source}`);
    // Dependency confusion: an id the mirror serves would be installed from here in its place.
    if (!existing && (await this.mirror.holdsNode(nodeId)))
      throw refusal(
        400,
        "Failed to create node",
        `node id '${nodeId}' is taken by the mirrored registry (compared case-insensitively); choose another`,
      );
    if (await this.mirror.holdsPublisher(publisher.id))
      throw refusal(400, "Failed to create node", `publisher id '${publisher.id}' is taken by the mirrored registry`);
    const version = typeof nodeVersion.version === "string" ? normalizeVersion(nodeVersion.version) : null;
    if (!version)
      throw refusal(
        400,
        "Failed to create node version",
        `version '${String(nodeVersion.version)}' is not a semantic version (MAJOR.MINOR.PATCH)`,
      );
    const nodeKey = existing?.id ?? nodeId;
    if (await this.repo.version(nodeKey, version)) throw refusal(400, "The node version already exists");

    const secret = newSecret(UPLOAD_SECRET_PREFIX);
    const now = this.now();
    const answered = {
      id: randomUUID(),
      node_id: nodeKey,
      version,
      changelog: typeof nodeVersion.changelog === "string" ? nodeVersion.changelog : "",
      dependencies: stringList(nodeVersion.dependencies),
      deprecated: false,
      downloadUrl: `${base}${archivePath(nodeKey, version)}`,
      status: this.settings.review ? "NodeVersionStatusPending" : "NodeVersionStatusActive",
      status_reason: "",
      createdAt: now.toISOString(),
      supported_os: stringList(nodeVersion.supported_os),
      supported_accelerators: stringList(nodeVersion.supported_accelerators),
      supported_comfyui_version: text(nodeVersion.supported_comfyui_version),
      supported_comfyui_frontend_version: text(nodeVersion.supported_comfyui_frontend_version),
    };
    await this.repo.addGrant({
      digest: digestOf(secret),
      publisherId: publisher.id,
      nodeId: nodeKey,
      version,
      request: { node: nodeFields(node), node_version: answered },
      expiresAt: new Date(now.getTime() + this.settings.uploadTtlSeconds * 1000).toISOString(),
    });
    return { node_version: answered, signedUrl: `${base}${uploadPath(publisher.id, nodeKey, version)}?signature=${secret}` };
  }
}

/** A refusal in registry-backend's `{message, error?}` body. */
export function refusal(status: number, message: string, detail?: string): PrivatePackError {
  return new PrivatePackError(status, message, "registry", detail);
}

/** The node fields a publish may set, as text or lists of text (anything else is dropped). */
function nodeFields(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of [
    "name",
    "description",
    "icon",
    "license",
    "repository",
    "banner_url",
    "supported_comfyui_version",
    "supported_comfyui_frontend_version",
  ]) {
    if (typeof node[k] === "string") out[k] = node[k].slice(0, 10_000);
  }
  for (const k of ["supported_os", "supported_accelerators", "tags"]) if (Array.isArray(node[k])) out[k] = stringList(node[k]);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function stringList(v: unknown): string[] {
  return Array.isArray(v)
    ? v
        .filter((x): x is string => typeof x === "string")
        .slice(0, 500)
        .map((x) => x.slice(0, 1000))
    : [];
}

function text(v: unknown): string {
  return typeof v === "string" ? v.slice(0, 200) : "";
}
