import { createReadStream } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { BaseSource, type Raw } from "../ports/source-base.ts";

/** An NDJSON file (one record a line) or a JSON array file. */
export class FileSource extends BaseSource {
  readonly description: string;
  readonly kind = "file" as const;
  constructor(private readonly path: string) {
    super();
    this.description = `file ${path}`;
  }

  protected async *raw(): AsyncGenerator<Raw> {
    if (await this.isJsonArray()) {
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(this.path, "utf8"));
      } catch (err) {
        throw new Error(`${this.path}: not valid JSON (${err instanceof Error ? err.message : String(err)})`, { cause: err });
      }
      const items = doc as unknown[];
      for (let i = 0; i < items.length; i++) yield { where: `element ${i + 1}`, value: items[i] };
      return;
    }
    const lines = createInterface({ input: createReadStream(this.path, { encoding: "utf8" }), crlfDelay: Infinity });
    let n = 0;
    for await (const line of lines) {
      n++;
      if (line.trim() === "") continue;
      try {
        yield { where: `line ${n}`, value: JSON.parse(line) };
      } catch (err) {
        yield { where: `line ${n}`, error: `not valid JSON (${err instanceof Error ? err.message : String(err)})` };
      }
    }
  }

  /** A JSON array starts with `[`; anything else is read as NDJSON. */
  private async isJsonArray(): Promise<boolean> {
    const fh = await open(this.path, "r");
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const head = buf
        .subarray(0, bytesRead)
        .toString("utf8")
        .replace(/^\uFEFF/, "")
        .trimStart();
      return head.startsWith("[");
    } finally {
      await fh.close();
    }
  }
}
