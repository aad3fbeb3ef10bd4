import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { seeded } from "./catalog.ts";
import { archiveBytes } from "./fake-archives.ts";
import { allComfyNodesPage, allVersionsPage, comfyNodeDefinition, type ListedVersion } from "./fake-registry-lists.ts";
import type { RegistryNode } from "./relevance-set.ts";

/**
 * A registry API of our own on a loopback port, modelled on the public registry-backend
 * (Comfy-Org/registry-backend at bf224c5, `services/registry/registry_svc.go`, and the production
 * OpenAPI in ../shared/spec) as closely as a mirror can tell:
 *
 * - `GET /nodes` pages with OFFSET/LIMIT and no ORDER BY unless `sort` is given. Rows come in
 *   table order, and a row that is updated (an install) moves to the end of it, as PostgreSQL's
 *   new tuple does: `movesPerListRequest` rows move before each list request is answered.
 * - `include_banned` (absent: `defaultIncludeBanned`), `timestamp` (rows updated after it),
 *   `latest=true` bypasses a one-minute cache of list answers (`cacheTtlMs`).
 * - The list's `latest_version` is the newest version by creation time whatever its status, with
 *   `downloadUrl: ""` (the list does not load storage files); the install path picks, among active,
 *   flagged and pending versions, the first by the version text descending, with its download URL.
 * - Per pack: `/nodes/{id}`, `/nodes/{id}/versions` (403 for a banned pack), `/nodes/{id}/install`
 *   (counts an install: the row moves), `/nodes/{id}/versions/{v}/comfy-nodes` (paged, each class
 *   a whole ComfyNode definition).
 * - The bulk routes: `/versions` (every pack's versions by version text, paged) and `/comfy-nodes`
 *   (fake-registry-lists.ts).
 *
 * - Storage: each version's `downloadUrl` is a real zip served here (`archiveBytes`, the same
 *   bytes on every call), at `/storage/{id}/{version}/node.zip`, as the registry's versions point
 *   at its storage bucket. `stop()` and `start()` again take the whole registry, storage included,
 *   down and back up on the same address mid-test.
 *
 * Faults on any route (a 500, a stall), a delay on every answer, and a log of every request.
 */
export interface FakeVersion extends Record<string, unknown> {
  version: string;
  status: string;
  createdAt: string;
  /** The class names of this version (its comfy-nodes); never part of a version's JSON. */
  classes?: string[];
}

export interface RequestLogEntry {
  method: string;
  path: string;
  query: URLSearchParams;
}

interface Fault {
  match: (path: string, query: URLSearchParams) => boolean;
  kind: "500" | "stall";
  times: number;
}

/** The storage URL versions are made with; answered as this registry's own `/storage/...` address. */
const PLACEHOLDER_STORAGE = "https://cdn.registry.example/";
const INSTALLABLE = new Set(["NodeVersionStatusActive", "NodeVersionStatusFlagged", "NodeVersionStatusPending"]);
const SORTABLE: Record<string, (n: RegistryNode, r: FakeRegistry) => string | number> = {
  id: (n) => n.id,
  name: (n) => String(n.name ?? ""),
  create_time: (n) => String(n.created_at ?? ""),
  update_time: (n, r) => r.updatedAt(n.id),
  total_install: (n) => Number(n.downloads ?? 0),
};

export class FakeRegistry {
  /** The table, in its physical order: the list's order when no `sort` is asked for. */
  nodes: RegistryNode[];
  /** Rows that move to the end of the table before each list request (installs between page requests). */
  movesPerListRequest = 0;
  /** `include_banned` absent: the registry's default (registry-backend filters banned packs only when it is false). */
  defaultIncludeBanned = true;
  /** False: a registry that ignores `sort` (an older one). */
  honourSort = true;
  /** How long a list answer is served again to a request without `latest=true`. */
  cacheTtlMs = 60_000;
  /** page → how many more times that list page answers 500 before it answers properly. */
  readonly failPage = new Map<number, number>();
  /** page → how many more times that list page never answers (the connection stays open, silent). */
  readonly stallPage = new Map<number, number>();
  /** Added to the total reported on list pages after the first: a registry that grows mid-mirror. */
  totalDrift = 0;
  /** Every list request's page number, in arrival order. */
  readonly pages: number[] = [];
  /** Every request, in arrival order. */
  readonly log: RequestLogEntry[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Milliseconds each answer waits, so concurrency and latency can show. */
  delayMs = 0;
  private readonly faults: Fault[] = [];
  private readonly versionsOf = new Map<string, FakeVersion[]>();
  private readonly updated = new Map<string, number>();
  private readonly cache = new Map<string, { at: number; body: string }>();
  private readonly stalled = new Set<ServerResponse>();
  private readonly random: () => number;
  private server: Server | undefined;
  private port = 0;
  url = "";

  constructor(nodes: RegistryNode[], opts: { seed?: number } = {}) {
    this.nodes = nodes;
    this.random = seeded(opts.seed ?? 1);
  }

  /** How many list passes began (requests for page 1 of `/nodes`). */
  get mirrorsStarted(): number {
    return this.pages.filter((p) => p === 1).length;
  }

  /** Requests whose path matches, e.g. `/versions$`. */
  requests(path?: RegExp): RequestLogEntry[] {
    return path ? this.log.filter((r) => path.test(r.path)) : [...this.log];
  }

  /** The next `times` requests whose path matches answer 500 (`kind: "500"`) or never answer (`"stall"`). */
  fault(path: RegExp, kind: Fault["kind"], times = 1): void {
    this.faults.push({ match: (p) => path.test(p), kind, times });
  }

  /** When the row was last updated (ms); rows never touched count as old. */
  updatedAt(id: string): number {
    return this.updated.get(id) ?? 0;
  }

  /** A pack's versions, newest first by creation time; derived from its record until set. */
  versions(id: string): FakeVersion[] {
    let vs = this.versionsOf.get(id);
    if (!vs) {
      const n = this.nodes.find((x) => x.id === id);
      vs = n ? derivedVersions(n) : [];
      this.versionsOf.set(id, vs);
    }
    return vs;
  }

  setVersions(id: string, versions: FakeVersion[]): void {
    this.versionsOf.set(id, versions);
  }

  /** The version `GET /nodes/{id}/install` answers: `ORDER BY version DESC` (text) over active, flagged and pending ones. */
  installVersion(id: string): FakeVersion | undefined {
    return installPath(this.versions(id));
  }

  /** A row is updated: it moves to the end of the table and counts as changed from now on. */
  touch(id: string, change: Partial<RegistryNode> = {}): void {
    const i = this.nodes.findIndex((n) => n.id === id);
    if (i < 0) throw new Error(`no pack ${id}`);
    const [row] = this.nodes.splice(i, 1);
    this.nodes.push({ ...row!, ...change, id });
    this.updated.set(id, Date.now());
  }

  addPack(node: RegistryNode): void {
    this.nodes.push(node);
    this.updated.set(node.id, Date.now());
  }

  /** A new version of a pack (created now, with these classes); publishing updates the pack's row. */
  publish(id: string, version: string, classes: string[], over: Partial<FakeVersion> = {}): FakeVersion {
    const v = { ...versionJson(id, version, new Date().toISOString(), "NodeVersionStatusActive"), classes, ...over };
    this.versions(id).unshift(v);
    this.touch(id);
    return v;
  }

  ban(id: string): void {
    this.touch(id, { status: "NodeStatusBanned" });
  }

  /** A hard delete, as registry-backend's DeleteNode: the row is gone, nothing marks it. */
  remove(id: string): void {
    this.nodes = this.nodes.filter((n) => n.id !== id);
    this.versionsOf.delete(id);
  }

  /** Listens on a free port the first time, and on that same port after a `stop()`. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(this.port, "127.0.0.1", resolve);
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  /** Where a version's archive is served here. */
  archiveUrl(id: string, version: string): string {
    return `${this.url}/storage/${encodeURIComponent(id)}/${encodeURIComponent(version)}/node.zip`;
  }

  async stop(): Promise<void> {
    for (const res of this.stalled) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    this.log.push({ method: req.method ?? "GET", path, query: url.searchParams });
    const isList = path === "/nodes";
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
    if (isList) this.pages.push(page);
    const fault = this.takeFault(path, url.searchParams);
    if (fault === "stall" || (isList && take(this.stallPage, page))) {
      this.stalled.add(res);
      res.on("close", () => this.stalled.delete(res));
      return;
    }
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (fault === "500" || (isList && take(this.failPage, page))) return send(res, 500, { error: "internal", message: "try again" });
      if (path.startsWith("/storage/")) return this.storage(path, req.method ?? "GET", res);
      const [status, body] = this.route(path, url.searchParams);
      send(res, status, body);
    } finally {
      this.inFlight--;
    }
  }

  /** The storage bucket: a known version's zip, 404 for anything else (as a bucket answers a missing object). */
  private storage(path: string, method: string, res: ServerResponse): void {
    const m = /^\/storage\/([^/]+)\/([^/]+)\/node\.zip$/.exec(path);
    const id = m ? decodeURIComponent(m[1]!) : "";
    const version = m ? decodeURIComponent(m[2]!) : "";
    if (!m || !this.versions(id).some((v) => v.version === version)) {
      res.writeHead(404, { "content-type": "application/xml" }).end("<Error><Code>NoSuchKey</Code></Error>");
      return;
    }
    const zip = archiveBytes(id, version);
    res.writeHead(200, { "content-type": "application/zip", "content-length": zip.length });
    res.end(method === "HEAD" ? undefined : zip);
  }

  /** A version as the API answers it, its storage URL pointing here unless a test set its own. */
  private served(id: string, v: FakeVersion): Record<string, unknown> {
    const out = publicVersion(v);
    if (typeof out.downloadUrl === "string" && out.downloadUrl.startsWith(PLACEHOLDER_STORAGE))
      out.downloadUrl = this.archiveUrl(id, v.version);
    return out;
  }

  private takeFault(path: string, query: URLSearchParams): Fault["kind"] | undefined {
    const f = this.faults.find((x) => x.times > 0 && x.match(path, query));
    if (!f) return undefined;
    f.times--;
    return f.kind;
  }

  private route(path: string, q: URLSearchParams): [number, unknown] {
    if (path === "/nodes") return this.list(q);
    if (path === "/versions")
      return allVersionsPage(this.nodes.flatMap((n) => this.versions(n.id).map((v) => this.served(n.id, v))) as ListedVersion[], q);
    if (path === "/comfy-nodes")
      return allComfyNodesPage(
        this.nodes.flatMap((n) =>
          this.versions(n.id).flatMap((v) => (v.classes ?? []).map((name) => ({ nodeId: n.id, version: v.version, name }))),
        ),
        q,
      );
    const m = /^\/nodes\/([^/]+)(?:\/(install|versions)(?:\/([^/]+)\/comfy-nodes)?)?$/.exec(path);
    if (!m) return [404, { error: "not_found", message: path }];
    const id = decodeURIComponent(m[1]!);
    const node = this.nodes.find((n) => n.id === id);
    if (!node) return [404, { error: "not_found", message: `Node ${id} not found` }];
    if (m[2] === undefined) return [200, this.listItem(node)];
    if (m[2] === "install") return this.install(node, q.get("version"));
    if (m[3] === undefined) {
      if (node.status === "NodeStatusBanned") return [403, { error: "forbidden", message: "Node banned" }];
      const statuses = q.getAll("statuses");
      return [
        200,
        this.versions(id)
          .filter((v) => statuses.length === 0 || statuses.includes(v.status))
          .map((v) => this.served(id, v)),
      ];
    }
    const v = this.versions(id).find((x) => x.version === decodeURIComponent(m[3]!));
    if (!v) return [404, { error: "not_found", message: "Version not found" }];
    const limit = Math.max(1, Number(q.get("limit") ?? 10) || 10);
    const p = Math.max(1, Number(q.get("page") ?? 1) || 1);
    const classes = v.classes ?? [];
    return [
      200,
      {
        comfy_nodes: classes.slice((p - 1) * limit, p * limit).map(comfyNodeDefinition),
        totalNumberOfPages: Math.ceil(classes.length / limit),
      },
    ];
  }

  private install(node: RegistryNode, version: string | null): [number, unknown] {
    if (version !== null && !/^\d+\.\d+\.\d+$/.test(version)) return [400, { error: "bad_request", message: "invalid version" }];
    const v = version === null ? this.installVersion(node.id) : this.versions(node.id).find((x) => x.version === version);
    if (!v) return [404, { error: "not_found", message: "Not found" }];
    this.touch(node.id, { downloads: Number(node.downloads ?? 0) + 1 });
    return [200, this.served(node.id, v)];
  }

  private list(q: URLSearchParams): [number, unknown] {
    for (let i = 0; i < this.movesPerListRequest && this.nodes.length > 0; i++) {
      const row = this.nodes[Math.floor(this.random() * this.nodes.length)]!;
      this.touch(row.id, { downloads: Number(row.downloads ?? 0) + 1 });
    }
    const key = [...q]
      .filter(([k]) => k !== "latest")
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join("&");
    const cached = this.cache.get(key);
    if (q.get("latest") !== "true" && cached && Date.now() - cached.at < this.cacheTtlMs) return [200, JSON.parse(cached.body)];
    const page = Math.max(1, Number(q.get("page") ?? 1) || 1);
    const limit = Math.max(1, Number(q.get("limit") ?? 10) || 10);
    const includeBanned = q.has("include_banned") ? q.get("include_banned") === "true" : this.defaultIncludeBanned;
    const ts = q.get("timestamp");
    const since = ts === null ? undefined : Date.parse(ts);
    if (since !== undefined && Number.isNaN(since)) return [400, { error: "bad_request", message: "timestamp: not a date-time" }];
    let rows = this.nodes.filter(
      (n) => (includeBanned || n.status !== "NodeStatusBanned") && (since === undefined || this.updatedAt(n.id) > since),
    );
    const sort = this.honourSort ? q.getAll("sort") : [];
    for (const s of [...sort].reverse()) {
      const [col, dir] = s.split(";");
      const get = SORTABLE[col!];
      if (!get) return [400, { error: "bad_request", message: `sort: unknown column ${col}` }];
      const sign = dir === "desc" ? -1 : 1;
      rows = [...rows].sort((a, b) => {
        const x = get(a, this);
        const y = get(b, this);
        return x < y ? -sign : x > y ? sign : 0;
      });
    }
    const total = rows.length + (page > 1 ? this.totalDrift : 0);
    const body = {
      nodes: rows.slice((page - 1) * limit, page * limit).map((n) => this.listItem(n)),
      page,
      limit,
      total,
      totalPages: Math.ceil(total / limit),
    };
    this.cache.set(key, { at: Date.now(), body: JSON.stringify(body) });
    return [200, body];
  }

  /** A pack as the list answers it: no class names, the newest version by creation time, no download URL. */
  private listItem(n: RegistryNode): Record<string, unknown> {
    const { app_node_names: _names, versions: _versions, latest_version: _lv, ...rest } = n;
    const newest = [...this.versions(n.id)].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
    return { ...rest, ...(newest && { latest_version: { ...publicVersion(newest), downloadUrl: "" } }) };
  }
}

function installPath(vs: FakeVersion[]): FakeVersion | undefined {
  return vs.filter((v) => INSTALLABLE.has(v.status)).sort((a, b) => (a.version < b.version ? 1 : a.version > b.version ? -1 : 0))[0];
}

function versionJson(id: string, version: string, createdAt: string, status: string): FakeVersion {
  return {
    id: `${id}@${version}`,
    node_id: id,
    version,
    createdAt,
    status,
    deprecated: false,
    dependencies: [],
    changelog: "",
    downloadUrl: `${PLACEHOLDER_STORAGE}${encodeURIComponent(id)}/${version}.zip`,
  };
}

/** A record's own versions, or one made from its latest_version; the install-path one carries its app_node_names. */
function derivedVersions(n: RegistryNode): FakeVersion[] {
  const given = Array.isArray(n.versions) ? (n.versions as FakeVersion[]) : undefined;
  const lv = (n.latest_version ?? {}) as Record<string, unknown>;
  const created = String(lv.createdAt ?? n.created_at ?? "2024-01-01T00:00:00Z");
  const version = String(lv.version ?? "1.0.0");
  const made = versionJson(n.id, version, created, String(lv.status ?? "NodeVersionStatusActive"));
  const vs = given
    ? given.map((v) => ({ ...versionJson(n.id, v.version, v.createdAt, v.status), ...v }))
    : [{ ...made, ...lv, downloadUrl: made.downloadUrl }];
  const install = installPath(vs);
  if (install && install.classes === undefined && Array.isArray(n.app_node_names)) install.classes = [...(n.app_node_names as string[])];
  return vs.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
}

function publicVersion(v: FakeVersion): Record<string, unknown> {
  const { classes: _classes, ...rest } = v;
  return rest;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function take(m: Map<number, number>, page: number): boolean {
  const n = m.get(page) ?? 0;
  if (n <= 0) return false;
  m.set(page, n - 1);
  return true;
}
