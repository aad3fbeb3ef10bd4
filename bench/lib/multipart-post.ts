import { request, type ClientRequest, type IncomingHttpHeaders } from "node:http";

/**
 * A keyed multipart POST of `length` bytes that `write` sends (it ends the request; it may wait
 * for 'drain' between writes, so a body of gigabytes is never held): the upload benches' client.
 */
export function postMultipart(
  url: string,
  path: string,
  opts: { boundary: string; key: string; length: number },
  write: (req: ClientRequest) => void,
): Promise<{ status: number; body: string }> {
  const headers = {
    "content-type": `multipart/form-data; boundary=${opts.boundary}`,
    "content-length": opts.length,
    "x-api-key": opts.key,
  };
  return sendBody(url, path, "POST", headers, write).then(({ status, body }) => ({ status, body }));
}

/** Any request whose body `write` sends (and ends), answered with its status, headers and text. */
export function sendBody(
  url: string,
  path: string,
  method: string,
  headers: Record<string, string | number>,
  write: (req: ClientRequest) => void,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    write(req);
  });
}
