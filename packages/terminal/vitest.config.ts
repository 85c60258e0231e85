import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "terminal",
    include: ["test/**/*.test.ts"]
  }
})
