import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "packaging",
    include: ["test/**/*.test.ts"],
    // Builds the server, the CLI, the dashboard and the libraries, and packs the three tarballs once.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000
  }
})
