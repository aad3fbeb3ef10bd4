import type { PrivateVersionRow } from "./store/private-pack-repository.ts";

/** A stored version in the registry's NodeVersion shape (its `downloadUrl` as answered at publish; the read routes set theirs). */
export function toNodeVersion(v: PrivateVersionRow): Record<string, unknown> {
  const { archive_sha256: _kept, ...fields } = v.fields;
  return {
    ...fields,
    id: v.id,
    node_id: v.nodeId,
    version: v.version,
    status: v.status,
    status_reason: v.statusReason,
    deprecated: v.deprecated,
    createdAt: v.createdAt,
  };
}
