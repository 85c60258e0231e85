import { defineProject } from "vitest/config"

export default defineProject({
  // Workspace packages resolve to their TypeScript sources through the "@databundle/source" export condition.
  ssr: { resolve: { conditions: ["@databundle/source"] } },
  test: {
    name: "dashboard",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
