/**
 * The API the server serves: the public API and the admin API side by side.
 */
import { AdminApi, ResellerApi } from "@databundle/contract"
import { HttpApi } from "@effect/platform"

/** Both APIs in one, so one router, one middleware chain and one error encoder serve them. */
export class ServerApi extends HttpApi.make("bundles")
  .addHttpApi(ResellerApi.ResellerApi)
  .addHttpApi(AdminApi.AdminApi)
{}
