/** A publisher id, as the registry makes them. */
export const PUBLISHER_ID_RE = /^[a-z][a-z0-9-]*$/;

/** A node id, as registry-backend checks it on publish (1-100 characters). */
export const NODE_ID_RE = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?$/;

export function isNodeId(id: string): boolean {
  return id.length >= 1 && id.length <= 100 && NODE_ID_RE.test(id);
}

export function isPublisherId(id: string): boolean {
  return id.length <= 100 && PUBLISHER_ID_RE.test(id);
}
