import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, loadConfig, type Closable } from "@app/platform";
import { archiveBytes } from "@app/testkit/fake-archives";
import type { RegistryNode } from "@app/testkit/catalog";
import { FakeRegistry } from "@app/testkit/fake-registry";
import { hasNginx, privateCa, registryServerBlock, startNginx } from "@app/testkit/nginx";
import { freePort } from "@app/testkit/processes";
import { mapNodeVersion } from "@app/testkit/registry-clients";
import { createGatewayApp } from "../src/app.ts";
import { composeGateway } from "../src/compose.ts";
import { serveOn } from "./web-support.ts";

/**
 * The closed-network recipe as the README gives it, run for real. Debian's
 * nginx terminates TLS for api.comfy.org with a certificate from a private CA made here with
 * openssl, and proxies every path to the gateway (MIRROR_ARCHIVES=on-demand), which mirrors the
 * testkit's fake registry. The clients resolve api.comfy.org to nginx themselves (no /etc/hosts)
 * and trust the CA (as REQUESTS_CA_BUNDLE makes requests do), then replay their install flows:
 *
 * - ComfyUI-Manager (Comfy-Org/ComfyUI-Manager f39cbd5): glob/cnr_utils.py's start-up list
 *   (30 a page), `install_node` and `all_versions_of_node`; glob/manager_core.py's `cnr_install`
 *   then downloads `download_url` through torchvision's `download_url`, whose redirect probe is a
 *   GET sending a `Method: HEAD` header, read for its headers and dropped, then the GET of the zip.
 * - comfy-cli (Comfy-Org/comfy-cli e805d26): registry/api.py's `install_node`, then
 *   file_utils.py's `download_file` (httpx, following redirects) of `download_url`.
 *
 * Each runs with upstream up, then again with upstream stopped; the bytes are upstream's both times.
 */
const v = (version: string, status: string, createdAt: string) => ({ version, status, createdAt });
const PACKS: RegistryNode[] = [
  {
    id: "comfyui-impact-pack",
    name: "Impact",
    status: "NodeStatusActive",
    versions: [
      v("8.8.1", "NodeVersionStatusActive", "2025-06-01T00:00:00Z"),
      v("8.7.0", "NodeVersionStatusActive", "2025-04-01T00:00:00Z"),
    ],
  },
  {
    id: "ComfyUI-KJNodes",
    name: "KJNodes",
    status: "NodeStatusActive",
    versions: [
      v("1.1.0", "NodeVersionStatusActive", "2025-03-01T00:00:00Z"),
      v("1.0.9", "NodeVersionStatusActive", "2025-01-01T00:00:00Z"),
    ],
  },
  ...Array.from({ length: 40 }, (_, i): RegistryNode => ({
    id: `filler-${String(i).padStart(2, "0")}`,
    name: `Filler ${i}`,
    status: "NodeStatusActive",
    versions: [v("1.0.0", "NodeVersionStatusActive", "2024-01-01T00:00:00Z")],
  })),
];

const skip = !hasNginx();
if (skip) console.log("closed-network-nginx: skipped: no /usr/sbin/nginx (apt-get install -y nginx; .ci/run installs it)");

describe.skipIf(skip)("closed network: nginx with a private CA in front of the service", () => {
  let dir: string;
  let registry: FakeRegistry;
  let closables: Closable[] = [];
  let stopGateway = async () => {};
  let stopNginx = async () => {};
  let port: number;
  let ca: Buffer;
  const upstreamBytes = new Map<string, Buffer>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "closed-network-"));
    registry = await new FakeRegistry(structuredClone(PACKS)).start();
    for (const p of PACKS.slice(0, 2))
      for (const x of p.versions as { version: string }[])
        upstreamBytes.set(`${p.id}@${x.version}`, Buffer.from(await (await fetch(registry.archiveUrl(p.id, x.version))).arrayBuffer()));
    const logger = createLogger("closed-network", "silent");
    const composed = await composeGateway(
      loadConfig({
        DATA_DIR: join(dir, "data"),
        CATALOG_SOURCE: registry.url,
        CATALOG_REFRESH: "off",
        MIRROR_ARCHIVES: "on-demand",
        ARCHIVE_TIMEOUT_MS: "3000",
        API_KEYS: "k",
        LOG_LEVEL: "silent",
      }),
      logger,
    );
    closables = composed.closables;
    const gateway = await serveOn(createGatewayApp({ services: composed.services, logger }));
    stopGateway = gateway.close;
    for (let i = 0; ; i++) {
      const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { catalog?: { mirror?: { phase?: string }; state?: string } };
      if (ready.catalog?.mirror?.phase === "done" && ready.catalog.state === "fresh") break;
      if (i > 1200) throw new Error("the mirror did not finish");
      await new Promise((r) => setTimeout(r, 50));
    }
    const tls = await privateCa(join(dir, "tls"));
    ca = tls.caPem;
    port = await freePort();
    const nginx = await startNginx(
      dir,
      registryServerBlock({ listen: `127.0.0.1:${port}`, cert: tls.cert, key: tls.key, service: gateway.url }),
      port,
    );
    stopNginx = nginx.stop;
  }, 120_000);

  afterAll(async () => {
    await stopNginx();
    await stopGateway();
    for (const c of closables) await c.close();
    await registry?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The client resolves api.comfy.org to nginx itself, as a name override in DNS would. */
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
    else cb(null, "127.0.0.1", 4);
  };

  interface Answer {
    status: number;
    headers: IncomingHttpHeaders;
    body: Buffer;
  }
  /** One HTTPS GET to api.comfy.org through nginx, following redirects as requests and httpx do. */
  async function get(url: string, o: { trust?: boolean; headers?: Record<string, string>; headersOnly?: boolean } = {}): Promise<Answer> {
    for (let hops = 0; ; hops++) {
      const a = await once(url, o);
      if (a.status < 300 || a.status >= 400 || hops >= 3) return a;
      url = new URL(String(a.headers.location), url).toString();
    }
  }
  function once(url: string, o: { trust?: boolean; headers?: Record<string, string>; headersOnly?: boolean }): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { lookup, ca: o.trust === false ? undefined : ca, headers: o.headers, agent: false }, (res) => {
        if (o.headersOnly) {
          res.destroy();
          return resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.alloc(0) });
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  }
  const base = () => `https://api.comfy.org:${port}`;
  const json = async (path: string) => {
    const a = await get(`${base()}${path}`);
    return { status: a.status, body: JSON.parse(a.body.toString("utf8")) };
  };

  /** ComfyUI-Manager: start-up list, install lookup, version list, then cnr_install's download of download_url. */
  async function managerInstall(id: string): Promise<{ version: string; bytes: Buffer }> {
    const seen = new Set<string>();
    for (let page = 1, remained = true; remained; page++) {
      const { status, body } = await json(`/nodes?page=${page}&limit=30&comfyui_version=v0.3.68&form_factor=git-linux`);
      expect(status).toBe(200);
      remained = page < body.totalPages;
      for (const x of body.nodes) seen.add(x.id);
    }
    expect(seen.size).toBe(PACKS.length);
    const install = await json(`/nodes/${id}/install`);
    expect(install.status).toBe(200);
    const nodeVersion = mapNodeVersion(install.body);
    expect(nodeVersion.download_url).toBe(`${base()}/archives/${id}/${nodeVersion.version}/node.zip`);
    const versions = await json(`/nodes/${id}/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending`);
    expect(versions.body.map((x: { version: string }) => x.version)).toContain(nodeVersion.version);
    // torchvision's _get_redirect_url: a GET carrying "Method: HEAD", its answer's URL read and the body dropped.
    const probe = await get(nodeVersion.download_url, { headers: { Method: "HEAD", "User-Agent": "pytorch/vision" }, headersOnly: true });
    expect(probe.status).toBe(200);
    const zip = await get(nodeVersion.download_url, { headers: { "User-Agent": "pytorch/vision" } });
    expect(zip.status).toBe(200);
    return { version: nodeVersion.version, bytes: zip.body };
  }

  /** comfy-cli: install_node(id, version), then download_file(download_url) with redirects followed. */
  async function comfyCliInstall(id: string, version: string): Promise<Buffer> {
    const install = await json(`/nodes/${id}/install?version=${version}`);
    expect(install.status).toBe(200);
    const nodeVersion = mapNodeVersion(install.body);
    const zip = await get(nodeVersion.download_url);
    expect(zip.status).toBe(200);
    expect(zip.headers["content-type"]).toBe("application/zip");
    return zip.body;
  }

  it("a client that does not trust the private CA is refused at the handshake", async () => {
    await expect(get(`${base()}/nodes/comfyui-impact-pack`, { trust: false })).rejects.toThrow(
      /self[- ]signed|unable to verify|certificate/i,
    );
  });

  it("ComfyUI-Manager's and comfy-cli's installs through nginx + TLS, with upstream up and then stopped: the bytes are upstream's", async () => {
    const manager = await managerInstall("comfyui-impact-pack");
    expect(manager.version).toBe("8.8.1");
    expect(Buffer.compare(manager.bytes, upstreamBytes.get("comfyui-impact-pack@8.8.1")!)).toBe(0);
    const cli = await comfyCliInstall("ComfyUI-KJNodes", "1.0.9");
    expect(Buffer.compare(cli, upstreamBytes.get("ComfyUI-KJNodes@1.0.9")!)).toBe(0);
    // A stored archive carries its digest through the proxy.
    const stored = await get(`${base()}/archives/comfyui-impact-pack/8.8.1/node.zip`);
    expect(stored.headers["repr-digest"]).toMatch(/^sha-256=:[A-Za-z0-9+/]+=*:$/);

    await registry.stop();
    const again = await managerInstall("comfyui-impact-pack");
    expect(Buffer.compare(again.bytes, archiveBytes("comfyui-impact-pack", "8.8.1"))).toBe(0);
    expect(Buffer.compare(await comfyCliInstall("ComfyUI-KJNodes", "1.0.9"), archiveBytes("ComfyUI-KJNodes", "1.0.9"))).toBe(0);
    // One never fetched while upstream was up: 503 naming it, which comfy-cli retries and Manager reports as a failed download.
    const missing = await json("/archives/ComfyUI-KJNodes/1.1.0/node.zip");
    expect(missing.status).toBe(503);
    expect(missing.body.message).toContain('"1.1.0"');
    // Every request went through nginx, with TLS.
    const log = await readFile(join(dir, "access.log"), "utf8");
    expect(log).toContain('GET /archives/comfyui-impact-pack/8.8.1/node.zip HTTP/1.1" 200');
    expect(log).toContain('GET /nodes/ComfyUI-KJNodes/install?version=1.0.9 HTTP/1.1" 200');
  });
});
