// better-sqlite3 is built from source at install (its prebuilt binaries come from GitHub, which
// these machines cannot reach), and node-gyp would download Node's headers from nodejs.org. The
// running Node's own headers are used when it ships them (<prefix>/include/node): pnpm passes
// only a few environment variables to build scripts, so this is how node-gyp learns the path.
const { existsSync } = require("node:fs");
const { resolve } = require("node:path");

const prefix = resolve(process.execPath, "../..");

module.exports = {
  hooks: {
    updateConfig(config) {
      if (!existsSync(resolve(prefix, "include/node/node_version.h"))) return config;
      config.extraEnv = { ...config.extraEnv, npm_config_nodedir: prefix, npm_package_config_node_gyp_nodedir: prefix };
      return config;
    },
  },
};
