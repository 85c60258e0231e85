/** Who is signed in to the console: the operator's id, so their own row offers no "Disable". */

let operatorId: number | undefined

/** The signed-in operator's id, once known. */
export const me = (): number | undefined => operatorId

/** Remembers who signed in (or that nobody is). */
export const setMe = (id: number | undefined): void => {
  operatorId = id
}
