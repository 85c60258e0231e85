/**
 * Test and live modes: every API key has one. A `test` key acts on its account's test data (a
 * wallet of play money, orders only the simulator fulfils); a `live` key on the real wallet and
 * the configured provider. Both answer the same API.
 */
import { Schema } from "effect"

/** `live` or `test`. */
export const Mode = Schema.Literal("live", "test").annotations({ identifier: "Mode" })

/** The type of `Mode`. */
export type Mode = typeof Mode.Type

/** An optional `mode` field or parameter; left out, it means `live`. */
export const modeOrLive = (description: string) => Schema.optional(Mode.annotations({ description }))
