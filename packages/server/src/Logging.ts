/**
 * Log output: one JSON object per line, at Info and above. The server logs to stdout;
 * one-shot commands log to stderr so that their stdout holds only their output.
 */
import { Layer, Logger, LogLevel } from "effect"

/** JSON lines on stdout, for `serve`. */
export const toStdout = Layer.mergeAll(
  Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(Logger.jsonLogger)),
  Logger.minimumLogLevel(LogLevel.Info)
)

/** JSON lines on stderr, for every other command. */
export const toStderr = Layer.mergeAll(
  Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.jsonLogger)),
  Logger.minimumLogLevel(LogLevel.Info)
)
