/**
 * A number's network, read from its prefix alone (`PhonePrefixes`, the contract's one table):
 * the active network whose operator the prefix was allocated to. A ported number keeps its
 * old prefix, so the answer is a hint; `null` when no operator uses the prefix, or when no
 * active network sells for that operator.
 */
import { ApiError, type Network, Phone, PhonePrefixes } from "@databundle/contract"
import { Effect } from "effect"
import { Catalog } from "./Catalog.js"

/** The network among `networks` that sells for the operator `id`: the slug that is the operator's key, else the first whose slug begins with it. */
export const networkFor = (
  networks: ReadonlyArray<Pick<Network.Network, "id" | "name" | "slug">>,
  operator: PhonePrefixes.PhoneOperatorId
): Phone.PrefixNetwork | null => {
  const found = networks.find((n) => n.slug.toLowerCase() === operator) ??
    networks.find((n) => PhonePrefixes.networkOperator(n.slug) === operator)
  return found === undefined ? null : { id: found.id, name: found.name, slug: found.slug }
}

/** Number lookups. */
export class PhoneNumbers extends Effect.Service<PhoneNumbers>()("core/PhoneNumbers", {
  dependencies: [Catalog.Default],
  effect: Effect.gen(function*() {
    const catalog = yield* Catalog

    /** The network of a number in one of the API's two forms; a 422 for anything else. */
    const lookup = Effect.fn("PhoneNumbers.lookup")(function*(phoneNumber: string) {
      if (!Phone.GHANA_PHONE.test(phoneNumber)) {
        return yield* ApiError.ValidationError.field(
          "phone_number",
          "must be a Ghana number: 0 followed by 9 digits, or 233 followed by 9 digits"
        )
      }
      const operator = PhonePrefixes.prefixOperator(PhonePrefixes.prefixOf(Phone.nationalDigits(phoneNumber)))
      const network = operator === undefined ? null : networkFor(yield* catalog.networks, operator.id)
      return { phone_number: phoneNumber, network, basis: "prefix" as const } satisfies Phone.PhoneNumberNetwork
    })

    return { lookup }
  })
}) {}
