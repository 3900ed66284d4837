import { EXIT_INTERRUPTED, EXIT_RUNTIME_FAILURE, EXIT_VERIFY_FAILURE } from "../errors.js";

/**
 * The `error` field of a failure's JSON (`run --json`): what kind of failure, by exit code.
 * runtime.c json_failure writes "runtime-failure" for the failures that end the process there.
 */
export function failureKind(exitCode: number, internal = false): "bad-input" | "runtime-failure" | "internal-error" | "verification-failure" | "interrupted" {
  if (exitCode === EXIT_VERIFY_FAILURE) return "verification-failure";
  if (exitCode === EXIT_INTERRUPTED) return "interrupted";
  if (exitCode === EXIT_RUNTIME_FAILURE) return internal ? "internal-error" : "runtime-failure";
  return "bad-input";
}
