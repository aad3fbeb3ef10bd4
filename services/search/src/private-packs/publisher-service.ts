import { randomUUID } from "node:crypto";
import { PrivatePackError } from "./domain/errors.ts";
import { isPublisherId } from "./domain/ids.ts";
import type { MirrorNamespace } from "./domain/mirror-namespace.ts";
import { digestOf, hintOf, newSecret } from "./domain/secrets.ts";
import type { PrivatePackRepository, PublisherRow, TokenRow } from "./store/private-pack-repository.ts";

/** Who manages a publisher: the principal of an API key, or an administrator at the command line. */
export type Actor = { owner: string } | "admin";

/** A publishing token's prefix: tells a leaked one apart from an API key (`crs_`). */
export const TOKEN_PREFIX = "crp_";

export interface PublisherView {
  id: string;
  name: string;
  status: string;
  createdAt: string;
  members: { role: string; user: { id: string; name: string } }[];
  /** This instance's own publisher, not one the mirror holds. */
  private: true;
}

export interface TokenView {
  id: string;
  name: string;
  description: string;
  token: string;
  createdAt: string;
}

/** Publishers and their publishing tokens. Only the owning key's principal (or an admin) manages one. */
export class PublisherService {
  constructor(
    private readonly repo: PrivatePackRepository,
    private readonly mirror: MirrorNamespace,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(actor: Actor, input: { id?: unknown; name?: unknown; owner?: string }): Promise<PublisherView> {
    const id = typeof input.id === "string" ? input.id : "";
    if (!isPublisherId(id)) throw new PrivatePackError(400, "publisher id must match ^[a-z][a-z0-9-]*$ (at most 100 characters)");
    const name = typeof input.name === "string" && input.name.trim() !== "" ? input.name.trim().slice(0, 200) : id;
    if (await this.mirror.holdsPublisher(id))
      throw new PrivatePackError(400, `publisher id '${id}' is taken by the mirrored registry; choose another`);
    const owner = actor === "admin" ? (input.owner ?? "admin") : actor.owner;
    const row: PublisherRow = { id, name, owner, status: "PublisherStatusActive", createdAt: this.now().toISOString() };
    if (!(await this.repo.createPublisher(row))) throw new PrivatePackError(400, `publisher '${id}' already exists`, "conflict");
    return publisherView(row);
  }

  /** The publisher, if the actor may manage it; 404 otherwise, so other principals' publishers are not revealed. */
  async owned(actor: Actor, id: string): Promise<PublisherRow> {
    const row = await this.repo.publisher(id);
    if (!row || (actor !== "admin" && row.owner !== actor.owner))
      throw new PrivatePackError(404, actor === "admin" ? `no publisher '${id}'` : `no publisher '${id}' managed by this key`);
    return row;
  }

  /** A new token; its plaintext is returned here only. */
  async createToken(
    actor: Actor,
    publisherId: string,
    input: { name?: unknown; description?: unknown },
  ): Promise<{ token: string; id: string }> {
    const publisher = await this.owned(actor, publisherId);
    const token = newSecret(TOKEN_PREFIX);
    const id = randomUUID();
    await this.repo.addToken({
      id,
      publisherId: publisher.id,
      name: text(input.name, "token"),
      description: text(input.description, ""),
      digest: digestOf(token),
      hint: hintOf(token, TOKEN_PREFIX),
      createdAt: this.now().toISOString(),
    });
    return { token, id };
  }

  async listTokens(actor: Actor, publisherId: string): Promise<TokenView[]> {
    const publisher = await this.owned(actor, publisherId);
    return (await this.repo.tokens(publisher.id)).map(tokenView);
  }

  async revokeToken(actor: Actor, publisherId: string, tokenId: string): Promise<void> {
    const publisher = await this.owned(actor, publisherId);
    if (!(await this.repo.revokeToken(publisher.id, tokenId)))
      throw new PrivatePackError(404, `publisher '${publisher.id}' has no token '${tokenId}'`);
  }
}

export function publisherView(row: PublisherRow): PublisherView {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    createdAt: row.createdAt,
    members: [{ role: "owner", user: { id: row.owner, name: row.owner } }],
    private: true,
  };
}

function tokenView(t: TokenRow): TokenView {
  return { id: t.id, name: t.name, description: t.description, token: t.hint, createdAt: t.createdAt };
}

function text(v: unknown, fallback: string): string {
  return typeof v === "string" ? v.slice(0, 500) : fallback;
}
