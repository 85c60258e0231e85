import { defineProject } from "vitest/config"

export default defineProject({
  // Workspace packages resolve to their TypeScript sources through the "@databundle/source" export condition.
  ssr: { resolve: { conditions: ["@databundle/source"] } },
  test: {
    name: "sql-pg",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
