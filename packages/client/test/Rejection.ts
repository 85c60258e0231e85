/**
 * Catching what a Promise-face call throws, so a test can narrow it with `instanceof`.
 */

/** The rejection of `promise`; fails the test when it resolves instead. */
export const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected the call to fail, but it succeeded")
}
