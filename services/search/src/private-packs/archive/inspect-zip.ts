import yauzl from "yauzl";
import { PrivatePackError } from "../domain/errors.ts";

export interface ZipLimits {
  maxUnpackedBytes: number;
  /** Unpacked bytes per archive byte. */
  maxRatio: number;
  maxEntries: number;
}

export interface ZipContents {
  entries: number;
  unpackedBytes: number;
  /** The text of each Python file (at most PY_TEXT_MAX bytes each), for the static read of its node classes. */
  pythonFiles: { name: string; text: string }[];
}

/** A Python file longer than this is not read for classes (a node file is a few hundred KB at most). */
const PY_TEXT_MAX = 4 * 1024 * 1024;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/**
 * Whether the archive at `file` is one a client may unpack safely: a readable zip whose entries
 * have no absolute path, no `..` segment and no symbolic link, and which unpacks to no more than
 * the limits. Every entry is inflated (and discarded) to count its real size: the sizes a zip
 * declares can lie. Refusals are 400 with the reason.
 */
export async function inspectZip(file: string, archiveBytes: number, limits: ZipLimits): Promise<ZipContents> {
  const maxUnpacked = Math.min(limits.maxUnpackedBytes, Math.max(archiveBytes, 1) * limits.maxRatio);
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise((resolve, reject) =>
      yauzl.open(file, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true }, (err, z) =>
        err ? reject(err) : resolve(z),
      ),
    );
  } catch (err) {
    throw refused(`not a readable zip archive (${(err as Error).message})`);
  }
  const contents: ZipContents = { entries: 0, unpackedBytes: 0, pythonFiles: [] };
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", (err: Error) =>
        reject(err instanceof PrivatePackError ? err : refused(`not a readable zip archive (${err.message})`)),
      );
      zip.on("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        void checkEntry(zip, entry, contents, limits, maxUnpacked).then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return contents;
}

async function checkEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  contents: ZipContents,
  limits: ZipLimits,
  maxUnpacked: number,
): Promise<void> {
  const name = entryName(entry);
  if (++contents.entries > limits.maxEntries) throw refused(`more than ${limits.maxEntries} entries (PUBLISH_MAX_ENTRIES)`);
  if (/^([/\\]|[A-Za-z]:)/.test(name)) throw refused(`entry '${shown(name)}' has an absolute path`);
  if (name.split(/[/\\]/).includes("..")) throw refused(`entry '${shown(name)}' climbs out of the folder ('..')`);
  if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) throw refused(`entry '${shown(name)}' is a symbolic link`);
  if (name.endsWith("/")) return;
  const isPython = name.endsWith(".py") && entry.uncompressedSize <= PY_TEXT_MAX;
  const chunks: Buffer[] = [];
  const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err ? reject(refused(`entry '${shown(name)}' cannot be read (${err.message})`)) : resolve(s))),
  );
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => {
      contents.unpackedBytes += chunk.length;
      if (contents.unpackedBytes > maxUnpacked) {
        (stream as unknown as { destroy(): void }).destroy();
        reject(
          refused(`it unpacks to more than ${maxUnpacked} bytes (PUBLISH_MAX_UNPACKED_BYTES, or PUBLISH_MAX_RATIO times the archive)`),
        );
      } else if (isPython) chunks.push(chunk);
    });
    stream.on("error", (err: Error) => reject(refused(`entry '${shown(name)}' cannot be read (${err.message})`)));
    stream.on("end", () => resolve());
  });
  if (isPython) contents.pythonFiles.push({ name, text: Buffer.concat(chunks).toString("utf8") });
}

/** The name as stored (yauzl's own decoding would refuse a bad path before the reason could be named here). */
function entryName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer | string;
  return typeof raw === "string" ? raw : raw.toString(entry.generalPurposeBitFlag & 0x800 ? "utf8" : "latin1");
}

function refused(reason: string): PrivatePackError {
  return new PrivatePackError(400, `the archive was refused: ${reason}`, "registry");
}

/** An entry name as a message may quote it: short, one line. */
function shown(name: string): string {
  return name.replace(/[\r\n]/g, " ").slice(0, 200);
}
