/**
 * Whether a pack was published to this instance by a team (a private pack) rather than mirrored:
 * the registry routes tag every private pack `private` (search's private-packs/private-records.ts).
 */
export function isPrivatePack(node: { tags?: readonly string[] | undefined }): boolean {
  return node.tags?.includes("private") ?? false;
}
