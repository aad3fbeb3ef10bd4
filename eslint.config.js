// ESLint for the whole workspace: typescript-eslint's type-aware rules on every TypeScript file,
// with formatting left to Prettier (eslint-config-prettier turns the stylistic rules off).
// Each workspace package runs `eslint .` as its turbo `lint` task; the root runs it on its own files.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Harness code: tests, the test kit, benches. */
const harness = [
  "**/test/**",
  "**/*.test.ts",
  "test-reliability/**",
  "test-support/**",
  "packages/testkit/**",
  "bench/**",
  "packages/*/bench/**",
];

export default tseslint.config(
  {
    ignores: ["**/node_modules/**", "**/dist/**", "**/.turbo/**", "**/.data/**", "**/coverage/**", "**/bench/results/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Each file is checked with the tsconfig.json nearest to it; the root's own config files
        // belong to no package, so they are checked with the default project.
        projectService: { allowDefaultProject: ["*.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // What this linter is here for: a promise nobody awaits loses its rejection, and a promise
      // handed where a void callback is expected (an event handler, a timer) does the same.
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      // An async function without `await` is how a port's Promise-returning method is met by a
      // synchronous implementation; it is not a bug.
      "@typescript-eslint/require-await": "off",
      // The code's objects are closures and arrow-function properties; a type that declares them
      // with method syntax makes every `opts.isReady` a report with no `this` anywhere.
      "@typescript-eslint/unbound-method": "off",
      // The regular expressions that name control characters do so on purpose: NUL separators in
      // the search index, binary sniffing of uploads.
      "no-control-regex": "off",
      // A leading underscore marks what is left out on purpose: a rest sibling dropped from an
      // object, Express's four-argument error handler's `next`.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // An AbortSignal's reason is `any`; passing it on is what an aborted wait should do.
      // A timer declared before the callbacks that clear it, and set after them, stays `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    files: harness,
    rules: {
      // Harness code reads JSON bodies (supertest's `body` is `any`) and asserts on them: the
      // assertion is the type check, and annotating every read would be churn for no safety.
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-base-to-string": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // CommonJS is what pnpm's hook file has to be.
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["services/web/src/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
