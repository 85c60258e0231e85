import { defineProject } from "vitest/config"

export default defineProject({
  // Workspace packages resolve to their TypeScript sources through the "@databundle/source" export condition.
  ssr: { resolve: { conditions: ["@databundle/source"] } },
  test: {
    name: "contract",
    include: ["test/**/*.test.ts"]
  }
})
