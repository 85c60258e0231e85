/**
 * `admin operators`: the people who sign in to the console with passwords of their own. A
 * new operator's password is read from stdin (`--password-stdin`), or made here and printed
 * once, never stored anywhere but as its hash on the server. Each has a role: `owner`s manage
 * operators, `operator`s (the default) run the business.
 */
import { AdminApi, Operator, User } from "@databundle/contract"
import { problem } from "@databundle/terminal/Failure"
import { Args, Command, Options } from "@effect/cli"
import { Effect, Either } from "effect"
import { randomBytes } from "node:crypto"
import { execute, request } from "./Call.js"
import { checked, decodeWith, shared, usage } from "./Options.js"
import { date } from "./Text.js"

/** Reads all of stdin and drops one trailing line break. */
const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "")
})

const status = (operator: Operator.OperatorSummary) =>
  operator.disabled_at === null ? "active" : `disabled ${date(operator.disabled_at)}`

const operatorsList = Command.make("list", { ...shared }, (options) =>
  execute(
    options,
    request(options, (client) => client.operators.list()),
    AdminApi.OperatorsResponse,
    ({ operators }) =>
      operators.length === 0
        ? ["No operators yet: create one with bundles-server admin operators create."]
        : operators.map((o) => `${o.id}  ${o.email}  ${o.name}  ${o.role}  (${status(o)}, since ${date(o.created_at)})`)
  )).pipe(Command.withDescription("Every operator, with their role and whether they may sign in"))

const roleOption = Options.choice("role", Operator.OperatorRole.literals)

const operatorId = Args.integer({ name: "ID" }).pipe(
  Args.withDescription("The operator's id"),
  Args.mapEffect((n) => Either.mapLeft(decodeWith(Operator.OperatorId)(n), (message) => usage(`ID ${message}`).error))
)

const operatorsCreate = Command.make("create", {
  ...shared,
  email: Options.text("email").pipe(
    Options.withDescription("The address they sign in with"),
    checked("email", decodeWith(User.Email))
  ),
  name: Options.text("name").pipe(
    Options.withDescription("Their name, shown in the action log"),
    checked("name", decodeWith(Operator.CreateOperatorPayload.fields.name))
  ),
  passwordStdin: Options.boolean("password-stdin").pipe(
    Options.withDescription("Read the password from stdin (else one is made and printed once)")
  ),
  role: roleOption.pipe(
    Options.withDescription("owner: also manages operators; operator: runs the business"),
    Options.withDefault("operator" as const)
  )
}, (options) =>
  Effect.gen(function*() {
    const generated = !options.passwordStdin
    const password = generated ? randomBytes(18).toString("base64url") : yield* readStdin
    return yield* execute(
      options,
      Effect.gen(function*() {
        const valid = decodeWith(User.Password)(password)
        if (Either.isLeft(valid)) return yield* problem(`The password from stdin ${valid.left}`)
        return yield* request(options, (client) =>
          client.operators.create({
            payload: { email: options.email, name: options.name, password, role: options.role }
          }))
      }),
      AdminApi.OperatorResponse,
      ({ operator }) => [
        `${
          operator.role === "owner" ? "Owner" : "Operator"
        } ${operator.id} created: ${operator.email} (${operator.name}).`,
        ...(generated ? ["", "Their password (shown only now; give it to them safely):", "", `  ${password}`] : [])
      ]
    )
  })).pipe(Command.withDescription("Create an operator who signs in to the console"))

const operatorsSetRole = Command.make("set-role", {
  ...shared,
  id: operatorId,
  role: Args.choice(Operator.OperatorRole.literals.map((role) => [role, role] as const), { name: "ROLE" }).pipe(
    Args.withDescription("owner or operator")
  )
}, (options) =>
  execute(
    options,
    request(options, (client) =>
      client.operators.update({ path: { operator_id: options.id }, payload: { role: options.role } })),
    AdminApi.OperatorResponse,
    (
      { operator }
    ) => [
      `Operator ${operator.id} (${operator.email}) is now ${operator.role === "owner" ? "an owner" : "an operator"}.`
    ]
  )).pipe(Command.withDescription("Make an operator an owner (manages operators) or an operator (runs the business)"))

const operatorsDisable = Command.make("disable", {
  ...shared,
  id: operatorId
}, (options) =>
  execute(
    options,
    request(options, (client) => client.operators.disable({ path: { operator_id: options.id } })),
    AdminApi.OperatorResponse,
    ({ operator }) => [`Operator ${operator.id} (${operator.email}) disabled; their sessions are ended.`]
  )).pipe(Command.withDescription("Disable an operator: ends their sessions and refuses their sign-in"))

const operatorsResetPassword = Command.make("reset-password", {
  ...shared,
  email: Args.text({ name: "EMAIL" }).pipe(
    Args.withDescription("The address the operator signs in with"),
    Args.mapEffect((text) => Either.mapLeft(decodeWith(User.Email)(text), (message) => usage(`EMAIL ${message}`).error))
  ),
  passwordStdin: Options.boolean("password-stdin").pipe(
    Options.withDescription("Read the new password from stdin (else one is made and printed once)")
  )
}, (options) =>
  Effect.gen(function*() {
    const generated = !options.passwordStdin
    const password = generated ? randomBytes(18).toString("base64url") : yield* readStdin
    return yield* execute(
      options,
      Effect.gen(function*() {
        const valid = decodeWith(User.Password)(password)
        if (Either.isLeft(valid)) return yield* problem(`The password from stdin ${valid.left}`)
        const { operators } = yield* request(options, (client) => client.operators.list())
        const operator = operators.find((o) => o.email === options.email)
        if (operator === undefined) return yield* problem(`No operator signs in with ${options.email}`)
        return yield* request(options, (client) =>
          client.operators.resetPassword({ path: { operator_id: operator.id }, payload: { password } }))
      }),
      AdminApi.OperatorResponse,
      ({ operator }) => [
        `Operator ${operator.id} (${operator.email}) has a new password; their sessions are ended.`,
        ...(generated ? ["", "Their new password (shown only now; give it to them safely):", "", `  ${password}`] : [])
      ]
    )
  })).pipe(Command.withDescription("Set a new password for an operator who forgot theirs; ends their sessions"))

/** `admin operators`: list, create, set-role, disable, reset-password. */
export const operators = Command.make("operators").pipe(
  Command.withDescription("The operators who sign in to the console"),
  Command.withSubcommands([operatorsList, operatorsCreate, operatorsSetRole, operatorsDisable, operatorsResetPassword])
)
