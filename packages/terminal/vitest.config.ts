import { defineProject } from "vitest/config"

export default defineProject({
  // Workspace packages resolve to their TypeScript sources through the "@databundle/source" export condition.
  ssr: { resolve: { conditions: ["@databundle/source"] } },
  test: {
    name: "terminal",
    include: ["test/**/*.test.ts"]
  }
})
