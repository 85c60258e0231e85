import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "dashboard",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
