/**
 * What the upstream provider, the catalogue sync and the balance watch ask of a supplier: a
 * seller, in this API's own shapes. A wholesaler of this same API is one through
 * `@databundle/client` as it is; an aggregator with an API of its own (`Reloadly.ts`) is one
 * through an adapter module, so adding another is writing one module and its test fake.
 */
import type { Bundle, Network, Order } from "@databundle/contract"
import { Data, type Effect } from "effect"

/** An order as a seller reports it: its own number and where it stands. */
export interface SellerOrder {
  readonly order_number: string
  readonly status: Order.OrderStatus
}

/** A supplier the provider buys from. Every failure is read by `Upstream.classify`. */
export interface Seller {
  /** The main balance, in the minor unit of the seller's currency. */
  readonly balance: () => Effect.Effect<{ readonly main: bigint }, unknown>
  /** What it sells, as networks of this API. */
  readonly networks: () => Effect.Effect<ReadonlyArray<Network.Network>, unknown>
  /** A network's bundles, `price` in pesewas, `id` the bundle's id at the seller. */
  readonly bundles: (networkId: number) => Effect.Effect<ReadonlyArray<Bundle.Bundle>, unknown>
  /** Buys a bundle under our order number as its reference; a repeat answers the order it already holds. */
  readonly placeOrder: (order: {
    readonly bundle_id: number
    readonly phone_number: string
    readonly reference: string
  }) => Effect.Effect<{ readonly order: SellerOrder }, unknown>
  /** An order by the seller's number. */
  readonly getOrder: (orderNumber: string) => Effect.Effect<SellerOrder, unknown>
  /** The orders held under a reference (ours: the order number). */
  readonly listOrders: (
    params: { readonly reference: string }
  ) => Effect.Effect<{ readonly orders: ReadonlyArray<SellerOrder> }, unknown>
}

/** How a seller call failed, in the provider's terms. */
export type Failure =
  | { readonly _tag: "NotConnected"; readonly message: string }
  | { readonly _tag: "RateLimited"; readonly waitMillis: number; readonly message: string }
  /** An answer that says it has no order under the reference (for a placement). */
  | { readonly _tag: "Refused"; readonly message: string; readonly balanceTooLow: boolean }
  | { readonly _tag: "NotFound"; readonly message: string }
  | { readonly _tag: "Unknown"; readonly message: string }

/** A failure an adapter has already read into the provider's terms. */
export class SellerFailure extends Data.TaggedError("SellerFailure")<{ readonly failure: Failure }> {
  override get message(): string {
    return this.failure.message
  }
}
