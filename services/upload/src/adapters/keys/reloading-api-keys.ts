import { watch, watchFile, unwatchFile, type FSWatcher, type StatsListener } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { Logger } from "@app/platform";
import { HashedApiKeys, parseKeyFile, plaintextEntries, type ApiKey, type ApiKeys, type KeyEntry } from "./api-keys.ts";

export interface ReloadOptions {
  file: string;
  plaintext?: string;
  logger: Logger;
  /** Changes closer together than this are read once. */
  debounceMs?: number;
  /** The stat poll behind the directory watch (network filesystems, Kubernetes' symlink swaps). */
  pollMs?: number;
}

/**
 * The key file, read again whenever it changes, so `pnpm apikey create|revoke` reaches a running
 * server. A directory watch reacts at once; a stat poll catches what it misses. A file that does
 * not parse leaves the keys as they were and says why in the log (line numbers, never contents).
 */
export class ReloadingApiKeys implements ApiKeys {
  private current: HashedApiKeys;
  private lastText: string | null;
  private readonly fixed: KeyEntry[];
  private dirWatcher: FSWatcher | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private reading: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly onPoll: StatsListener = () => this.schedule();

  private constructor(
    private readonly opts: ReloadOptions,
    text: string | null,
  ) {
    this.fixed = plaintextEntries(opts.plaintext);
    this.lastText = text;
    this.current = new HashedApiKeys([...(text === null ? [] : parseKeyFile(text, opts.file)), ...this.fixed]);
  }

  /** Reads the file once (a malformed file at boot is an error: there are no earlier keys to keep) and starts watching. */
  static async open(opts: ReloadOptions): Promise<ReloadingApiKeys> {
    const keys = new ReloadingApiKeys(opts, await readText(opts.file));
    keys.watch();
    return keys;
  }

  get count(): number {
    return this.current.count;
  }

  verify(presented: string): ApiKey | null {
    return this.current.verify(presented);
  }

  /** Read the file now; resolves when this read (and any before it) is done. */
  reload(): Promise<void> {
    this.reading = this.reading.then(() => this.readAndSwap());
    return this.reading;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.debounce) clearTimeout(this.debounce);
    this.dirWatcher?.close();
    unwatchFile(this.opts.file, this.onPoll);
    await this.reading;
  }

  private watch(): void {
    const name = basename(this.opts.file);
    try {
      this.dirWatcher = watch(dirname(this.opts.file), { persistent: false }, (_event, changed) => {
        // `..data` is how Kubernetes swaps a mounted Secret; a null name is a platform that does not say.
        if (changed === null || changed === name || changed.startsWith("..")) this.schedule();
      });
      this.dirWatcher.on("error", () => {
        this.dirWatcher?.close();
        this.dirWatcher = null;
      });
    } catch {
      this.dirWatcher = null; // no such directory yet, or no watch support: the poll still runs
    }
    watchFile(this.opts.file, { persistent: false, interval: this.opts.pollMs ?? 1_000 }, this.onPoll);
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.reload();
    }, this.opts.debounceMs ?? 100);
  }

  private async readAndSwap(): Promise<void> {
    if (this.closed) return;
    const { file, logger } = this.opts;
    let text: string | null;
    try {
      text = await readText(file);
    } catch (err) {
      logger.warn(
        { keyFile: file, err: (err as Error).message, keys: this.count },
        "key file not reloaded (unreadable); the keys loaded before stay",
      );
      return;
    }
    if (text === this.lastText) return;
    let entries: KeyEntry[];
    try {
      entries = text === null ? [] : parseKeyFile(text, file);
    } catch (err) {
      logger.warn(
        { keyFile: file, err: (err as Error).message, keys: this.count },
        "key file not reloaded (malformed); the keys loaded before stay",
      );
      return;
    }
    this.lastText = text;
    this.current = new HashedApiKeys([...entries, ...this.fixed]);
    logger.info({ keyFile: file, keys: this.current.count, labels: entries.map((e) => e.label) }, "key file reloaded");
  }
}

async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
