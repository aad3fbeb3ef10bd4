import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { RegistryNode } from "./relevance-set.ts";

/**
 * A registry API of our own on a loopback port: `GET /nodes?page=&limit=` over a list of nodes
 * the test controls, with the faults a mirror must survive. Every request is recorded.
 */
export class FakeRegistry {
  nodes: RegistryNode[];
  /** page → how many more times that page answers 500 before it answers properly. */
  readonly failPage = new Map<number, number>();
  /** page → how many more times that page never answers (the connection stays open, silent). */
  readonly stallPage = new Map<number, number>();
  /** Added to the total reported on pages after the first: a registry that grows mid-mirror. */
  totalDrift = 0;
  /** Every request's page number, in arrival order. */
  readonly pages: number[] = [];
  /** Requests being answered now, and the most at once. */
  inFlight = 0;
  maxInFlight = 0;
  /** Milliseconds each answer waits, so concurrency can show. */
  delayMs = 0;
  private readonly stalled = new Set<ServerResponse>();
  private server: Server | undefined;
  url = "";

  constructor(nodes: RegistryNode[]) {
    this.nodes = nodes;
  }

  /** How many full mirrors began (requests for page 1). */
  get mirrorsStarted(): number {
    return this.pages.filter((p) => p === 1).length;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.stalled) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== "/nodes") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not_found", message: url.pathname }));
      return;
    }
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
    const limit = Math.max(1, Number(url.searchParams.get("limit") ?? 10));
    this.pages.push(page);
    if (take(this.stallPage, page)) {
      this.stalled.add(res);
      res.on("close", () => this.stalled.delete(res));
      return;
    }
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (take(this.failPage, page)) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal", message: "try again" }));
        return;
      }
      const total = this.nodes.length + (page > 1 ? this.totalDrift : 0);
      const body = { nodes: this.nodes.slice((page - 1) * limit, page * limit), page, limit, total, totalPages: Math.ceil(total / limit) };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    } finally {
      this.inFlight--;
    }
  }
}

function take(m: Map<number, number>, page: number): boolean {
  const n = m.get(page) ?? 0;
  if (n <= 0) return false;
  m.set(page, n - 1);
  return true;
}
