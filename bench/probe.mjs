// Preloaded into a measured process (node --import bench/probe.mjs) when BENCH_PROBE_DIR is
// set: on SIGUSR2 it writes the process's own CPU time (process.cpuUsage, microseconds) and
// resident memory to $BENCH_PROBE_DIR/<pid>.json, so a benchmark reads the CPU the process
// itself counted. Workers of `serve --workers` inherit it with the rest of the command line.
import * as fs from "node:fs"
import * as path from "node:path"

const dir = process.env.BENCH_PROBE_DIR
if (dir !== undefined && dir !== "") {
  process.on("SIGUSR2", () => {
    const file = path.join(dir, `${process.pid}.json`)
    const { user, system } = process.cpuUsage()
    const sample = JSON.stringify({ pid: process.pid, user, system, rss: process.memoryUsage.rss() })
    fs.writeFileSync(`${file}.tmp`, sample)
    fs.renameSync(`${file}.tmp`, file)
  })
}
