/**
 * Who is signed in to the console: the operator's id (their own row offers no "Disable") and
 * role (only an owner is offered the controls that manage operators; the server refuses the rest).
 */
import type { Session } from "./Endpoints.js"

type Operator = Session["operator"]

let signedIn: Pick<Operator, "id" | "role"> | undefined

/** The signed-in operator's id, once known. */
export const me = (): number | undefined => signedIn?.id

/** Whether the signed-in operator is an owner. */
export const isOwner = (): boolean => signedIn?.role === "owner"

/** Remembers who signed in (or that nobody is). */
export const setMe = (operator: Pick<Operator, "id" | "role"> | undefined): void => {
  signedIn = operator
}
