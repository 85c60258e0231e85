/**
 * The rules of a Ghana phone number as plain values: the forms the API takes, and what makes
 * one a mobile number. `Phone.ts` builds its schemas on them; the client reads typed numbers
 * with them (`@databundle/client/Phone`), in a command line or a browser page, without
 * loading `Schema`.
 */

/** `0` followed by 9 digits, or `233` followed by 9 digits: the two forms the API accepts. */
export const GHANA_PHONE = /^(?:0|233)\d{9}$/

/** The 9 national digits of a mobile number: 2 or 5 and eight more (03X numbers are fixed lines). */
export const MOBILE_NATIONAL = /^[25]\d{8}$/

/** The rule of a mobile number in words, after the name of what breaks it. */
export const MOBILE_RULE = "must be a Ghana mobile number, such as 024 123 4567"
