import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    reporters: ["default", "./test-support/summary-reporter.ts"],
    globalSetup: ["./test-support/redis-global-setup.ts"],
    include: ["test-reliability/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
  },
});
