/**
 * The Promise face speaks camelCase; the contract (and the Effect face) speak the API's
 * snake_case. Both directions are derived from the contract's own field names, by type and at
 * run time, so no field is ever written out twice.
 */
import type { Brand } from "effect"

/** `phone_number` → `phoneNumber`, as a type. */
export type CamelKey<K extends string> = K extends `${infer Head}_${infer Tail}` ?
  `${Head}${Capitalize<CamelKey<Tail>>}`
  : K

/** A contract value as the Promise face hands it out: camelCase keys, brands removed, `Date` and `bigint` kept. */
export type Camelize<T> = T extends Brand.Brand<any> ? Brand.Brand.Unbranded<T>
  : T extends string | number | bigint | boolean | null | undefined | Date ? T
  : T extends ReadonlyArray<infer Item> ? Array<Camelize<Item>>
  : { -readonly [K in keyof T as K extends string ? CamelKey<K> : K]: Camelize<T[K]> }

/** `phone_number` → `phoneNumber`; every segment of a dotted path (`limits.per_page` → `limits.perPage`). */
export const camelKey = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Converts a decoded contract value to the Promise face's form (a fresh copy; dates and bigints shared). */
export const camelize = <T>(value: T): Camelize<T> => {
  if (Array.isArray(value)) return value.map(camelize) as Camelize<T>
  if (!isPlainObject(value)) return value as Camelize<T>
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[camelKey(key)] = camelize(item)
  return out as Camelize<T>
}

type Alias<T, K extends keyof T & string> = CamelKey<K> extends K ? Pick<T, K>
  : {} extends Pick<T, K> ? { [P in K | CamelKey<K>]?: T[K] }
  : ({ [P in CamelKey<K>]: T[K] } & { [P in K]?: T[K] }) | ({ [P in K]: T[K] } & { [P in CamelKey<K>]?: T[K] })

// Each field's alternatives travel in a one-element tuple, so intersecting them does not distribute.
type Head<T> = T extends readonly [unknown] ? T[0] : never

type Intersect<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never

/**
 * An input of the Promise face: each field by its camelCase name, or by the API's snake_case
 * name as an alias (`bundleId` or `bundle_id`), required fields still required.
 */
export type WithAliases<T> = Head<Intersect<{ [K in keyof T & string]-?: [Alias<T, K>] }[keyof T & string]>>

/**
 * Reads an input given with camelCase names or their snake_case aliases into the contract's
 * snake_case fields. Giving one field under both names with different values is a `TypeError`.
 */
export const fromAliases = (fields: ReadonlyArray<string>, input: object | undefined): Record<string, unknown> => {
  const source = (input ?? {}) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const field of fields) {
    const camel = camelKey(field)
    const byCamel = source[camel]
    const bySnake = source[field]
    if (camel !== field && byCamel !== undefined && bySnake !== undefined && byCamel !== bySnake) {
      throw new TypeError(`give ${camel} or ${field}, not both`)
    }
    const value = byCamel ?? bySnake
    if (value !== undefined) out[field] = value
  }
  return out
}
