import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    reporters: ["default", "./test-support/summary-reporter.ts"],
    globalSetup: ["./test-support/redis-global-setup.ts"],
    include: [
      "{packages,services}/*/test/**/*.test.ts",
      "deploy/test/**/*.test.ts",
      "bench/test/**/*.test.ts",
      "test-support/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
