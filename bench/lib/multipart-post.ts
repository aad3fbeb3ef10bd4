import { request, type ClientRequest } from "node:http";

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
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname,
      port: u.port,
      method: "POST",
      path,
      headers: { "content-type": `multipart/form-data; boundary=${opts.boundary}`, "content-length": opts.length, "x-api-key": opts.key },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    write(req);
  });
}
