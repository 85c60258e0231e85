// The lint configuration (a dotfile, so the repository's top level stays as documented; `pnpm lint` passes it).
import effectPlugin from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/build/**", "**/dist/**", "**/.bundles/**", "**/coverage/**"] },
  ...tseslint.configs.recommended,
  ...effectPlugin.configs.dprint,
  {
    plugins: { "@effect": effectPlugin },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-empty-object-type": "off",
      "no-restricted-imports": ["error", { paths: [{ name: "@effect/schema", message: "Import Schema from effect" }] }]
    }
  }
)
