/**
 * Which Ghana mobile operator a number's prefix belongs to: the contract's one table, which the
 * server's lookup and its order warnings read too, so the client and the server never disagree.
 */
export {
  networkOperator,
  PHONE_PREFIXES,
  type PhoneOperatorId,
  prefixOperator,
  type PrefixWarning,
  prefixWarning,
  type PrefixWarningCode
} from "@databundle/contract/PhonePrefixes"
