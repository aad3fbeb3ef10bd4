import { spawn } from "node:child_process";

export interface ScanVerdict {
  flagged: boolean;
  /** The command's output when it flagged, cut to what a status_reason holds. */
  output: string;
}

const OUTPUT_MAX = 4000;

/**
 * PUBLISH_SCAN_COMMAND on a stored archive: a shell command line, with the archive's path passed
 * as its last argument (`"$@"`, never spliced into the text). A non-zero exit flags the version.
 */
export function scanArchive(command: string, file: string, timeoutMs = 5 * 60_000): Promise<ScanVerdict> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", `${command} "$@"`, "publish-scan", file], { stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
    let output = "";
    const keep = (chunk: Buffer) => {
      if (output.length < OUTPUT_MAX) output += chunk.toString("utf8");
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => resolve({ flagged: true, output: `the scan could not run: ${err.message}` }));
    child.on("close", (code, signal) =>
      resolve({
        flagged: code !== 0,
        output: (output.trim() || (signal ? `the scan was stopped (${signal})` : `exit ${code}`)).slice(0, OUTPUT_MAX),
      }),
    );
  });
}
