import { describe, expect, it } from "vitest";
import { kindOf } from "../src/assets/asset-kind.ts";
import { suggestChoice, tagsOf } from "../src/assets/upload-settings.ts";
import { formatBytes, splitName, timeAgo } from "../src/ui/format.ts";

describe("sizes", () => {
  it.each([
    [0, "0 bytes"],
    [1, "1 byte"],
    [999, "999 bytes"],
    [1000, "1 kB"],
    [3000, "3 kB"],
    [2900, "2.9 kB"],
    [123_456, "123 kB"],
    [999_999, "1 MB"],
    [1_500_000, "1.5 MB"],
    [6_938_000_000, "6.94 GB"],
  ])("%d bytes read %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});

describe("file names", () => {
  it("split into a stem that may shorten and an extension that stays", () => {
    expect(splitName("juggernaut-xl-v9-rundiffusion-photo.safetensors")).toEqual({
      stem: "juggernaut-xl-v9-rundiffusion-photo",
      ext: ".safetensors",
    });
    expect(splitName("README")).toEqual({ stem: "README", ext: "" });
    expect(splitName(".env")).toEqual({ stem: ".env", ext: "" });
    expect(splitName("archive.tar.gz")).toEqual({ stem: "archive.tar", ext: ".gz" });
  });

  it("give a weights file with no signature its extension as its kind", () => {
    expect(kindOf("application/octet-stream", "model.safetensors")).toBe("safetensors");
    expect(kindOf("application/octet-stream", "blob")).toBe("file");
    expect(kindOf("image/png")).toBe("png");
  });
});

describe("upload settings", () => {
  it("send a weights file to models as a checkpoint, anything else to input, with the extra tags after", () => {
    expect(tagsOf(suggestChoice("tiny.safetensors"))).toEqual(["models", "model_type:checkpoints"]);
    const photo = suggestChoice("photo.png");
    expect(tagsOf({ ...photo, extraTags: " portraits, input ,, people" })).toEqual(["input", "portraits", "people"]);
    expect(tagsOf({ ...suggestChoice("x.safetensors"), modelType: "loras" })).toEqual(["models", "model_type:loras"]);
  });
});

describe("the catalog's age", () => {
  it("reads in words", () => {
    const now = Date.parse("2026-01-10T12:00:00Z");
    expect(timeAgo("2026-01-10T11:59:50Z", now)).toBe("just now");
    expect(timeAgo("2026-01-10T11:55:00Z", now)).toBe("5 minutes ago");
    expect(timeAgo("2026-01-09T12:00:00Z", now)).toBe("1 day ago");
  });
});
