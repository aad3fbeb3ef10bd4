import { spawn, type ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Debian's nginx (`apt-get install nginx-light` or `nginx`); the tests that need it skip, saying so, without it. */
export const NGINX = "/usr/sbin/nginx";
export const hasNginx = (): boolean => existsSync(NGINX);

/**
 * The `server` block the README's closed-network recipe gives, with the values a test needs
 * (a port of its own instead of 443, files under its folder). Everything for api.comfy.org goes
 * to this service: in a closed network there is no real registry to send anything else to.
 */
export function registryServerBlock(o: { listen: string; cert: string; key: string; service: string }): string {
  return `server {
    listen ${o.listen} ssl;
    server_name api.comfy.org;
    ssl_certificate     ${o.cert};
    ssl_certificate_key ${o.key};

    location / {
        proxy_pass ${o.service};
        proxy_http_version 1.1;
        proxy_set_header Host              $host;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host  $http_host;
        proxy_set_header X-Forwarded-For   $proxy_add_x_forwarded_for;
        proxy_buffering off;
        proxy_read_timeout 120s;
        client_max_body_size 1m;
    }
}`;
}

/** A private CA and a certificate for api.comfy.org (subjectAltName DNS:api.comfy.org) signed by it, made with openssl. */
export async function privateCa(dir: string): Promise<{ caCert: string; cert: string; key: string; caPem: Buffer }> {
  await mkdir(dir, { recursive: true });
  const p = (f: string) => join(dir, f);
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=Closed network test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  await run("openssl", [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("server.key"),
    "-out",
    p("server.csr"),
    "-subj",
    "/CN=api.comfy.org",
  ]);
  await writeFile(
    p("server.ext"),
    "subjectAltName=DNS:api.comfy.org\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
  );
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    p("server.csr"),
    "-CA",
    p("ca.crt"),
    "-CAkey",
    p("ca.key"),
    "-CAcreateserial",
    "-out",
    p("server.crt"),
    "-days",
    "2",
    "-extfile",
    p("server.ext"),
  ]);
  return { caCert: p("ca.crt"), cert: p("server.crt"), key: p("server.key"), caPem: await readFile(p("ca.crt")) };
}

/** nginx in the foreground with a config of its own (pid, logs and temp files under `dir`); stopped by its pid. */
export async function startNginx(
  dir: string,
  serverBlock: string,
  port: number,
): Promise<{ child: ChildProcess; stop: () => Promise<void>; errorLog: string }> {
  const conf = join(dir, "nginx.conf");
  const errorLog = join(dir, "error.log");
  await writeFile(
    conf,
    `worker_processes 1;
daemon off;
pid ${join(dir, "nginx.pid")};
error_log ${errorLog} warn;
events { worker_connections 256; }
http {
    access_log ${join(dir, "access.log")};
    client_body_temp_path ${join(dir, "body")};
    proxy_temp_path ${join(dir, "proxy")};
    fastcgi_temp_path ${join(dir, "fastcgi")};
    uwsgi_temp_path ${join(dir, "uwsgi")};
    scgi_temp_path ${join(dir, "scgi")};
${serverBlock.replace(/^/gm, "    ")}
}
`,
  );
  const child = spawn(NGINX, ["-p", dir, "-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += String(d)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}${await readFile(errorLog, "utf8").catch(() => "")}`);
    if (await accepts(port)) break;
    if (i > 200) throw new Error(`nginx did not listen on ${port}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    errorLog,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}
