/**
 * The operator action log: who changed what through the admin API, and when. A line is
 * written by `record` inside the change's own transaction (the admin handlers wrap both in
 * one), so a change never commits without its line and a refused change leaves none.
 */
import { Operator, OperatorAction, Page as PageContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Int8Number, orDie, rowsOf } from "./Database.js"
import * as Page from "./Page.js"
import * as UrlCredentials from "./UrlCredentials.js"

/** Who made a change. */
export type Actor =
  | { readonly kind: "token" }
  | { readonly kind: "operator"; readonly operatorId: number }

/** One line to write. */
export interface Entry {
  readonly actor: Actor
  readonly action: OperatorAction.ActionName
  readonly targetKind: OperatorAction.TargetKind
  readonly targetId: string | number | null
  readonly accountId?: number | null | undefined
  readonly summary: string
  readonly detail?: unknown
  readonly requestId?: string | null | undefined
}

/** A line of the log as the API shows it, read from its row and its operator's email. */
const ActionRow = Schema.Struct({
  id: Int8Number,
  at: Schema.DateFromSelf,
  actor_kind: OperatorAction.ActorKind,
  operator_id: Schema.NullOr(Operator.OperatorId),
  operator_email: Schema.NullOr(Schema.String),
  action: OperatorAction.ActionName,
  target_kind: OperatorAction.TargetKind,
  target_id: Schema.NullOr(Schema.String),
  account_id: Schema.NullOr(Schema.Number),
  summary: Schema.String,
  // Drivers give jsonb parsed (pg) or as text (some): read both.
  detail: Schema.Union(Schema.parseJson(), Schema.Unknown),
  request_id: Schema.NullOr(Schema.String)
})

/** Writing and reading the action log. */
export class OperatorActions extends Effect.Service<OperatorActions>()("core/OperatorActions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Writes one line; call it inside the change's transaction. Credentials in a URL (a
     * webhook URL's `user:password@`) are hidden in what it says.
     */
    const record = Effect.fn("OperatorActions.record")(function*(entry: Entry) {
      const operatorId = entry.actor.kind === "operator" ? entry.actor.operatorId : null
      yield* orDie(sql`
        INSERT INTO operator_actions
          (actor_kind, operator_id, action, target_kind, target_id, account_id, summary, detail, request_id)
        VALUES (${entry.actor.kind}, ${operatorId}, ${entry.action}, ${entry.targetKind},
          ${entry.targetId === null ? null : String(entry.targetId)}, ${entry.accountId ?? null}, ${
        UrlCredentials.hide(entry.summary)
      },
          ${UrlCredentials.hide(JSON.stringify(entry.detail ?? {}))}::jsonb, ${entry.requestId ?? null})
      `)
    })

    /** The log, newest first, filtered as asked. */
    const list = Effect.fn("OperatorActions.list")(function*(query: OperatorAction.ListActionsParams) {
      const page = Page.resolve(query, PageContract.ADMIN_LISTS)
      const conditions = [sql`true`]
      if (query.actor === "token") conditions.push(sql`l.actor_kind = 'token'`)
      else if (query.actor === "operator") conditions.push(sql`l.actor_kind = 'operator'`)
      else if (query.actor !== undefined) conditions.push(sql`l.operator_id = ${Number(query.actor.slice(9))}`)
      if (query.action !== undefined) conditions.push(sql`l.action = ${query.action}`)
      if (query.target_kind !== undefined) conditions.push(sql`l.target_kind = ${query.target_kind}`)
      if (query.target_id !== undefined) conditions.push(sql`l.target_id = ${query.target_id}`)
      if (query.account_id !== undefined) conditions.push(sql`l.account_id = ${query.account_id}`)
      const where = sql.and(conditions)
      const [count] = yield* orDie(
        sql<{ total: string }>`SELECT count(*) AS total FROM operator_actions l WHERE ${where}`
      )
      const rows = yield* orDie(rowsOf(
        ActionRow,
        sql`
        SELECT l.*, o.email AS operator_email
        FROM operator_actions l LEFT JOIN operators o ON o.id = l.operator_id
        WHERE ${where}
        ORDER BY l.id DESC
        LIMIT ${page.perPage} OFFSET ${page.offset}
      `
      ))
      return { actions: rows, pagination: Page.pagination(page, Number(count!.total)) }
    })

    return { record, list }
  })
}) {}
