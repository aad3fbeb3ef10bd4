/** What the mirrored catalog holds, compared case-insensitively: the ids a private pack may not take. */
export interface MirrorNamespace {
  holdsNode(id: string): Promise<boolean>;
  holdsPublisher(id: string): Promise<boolean>;
}
