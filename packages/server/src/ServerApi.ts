/**
 * The API the server serves: the public API, the admin API, the dashboard API and the
 * console's sign-in API side by side.
 */
import { AdminApi, ConsoleApi, DashboardApi, ResellerApi } from "@databundle/contract"
import { HttpApi } from "@effect/platform"

/** The four APIs in one, so one router, one middleware chain and one error encoder serve them. */
export class ServerApi extends HttpApi.make("bundles")
  .addHttpApi(ResellerApi.ResellerApi)
  .addHttpApi(AdminApi.AdminApi)
  .addHttpApi(DashboardApi.DashboardApi)
  .addHttpApi(ConsoleApi.ConsoleApi)
{}
