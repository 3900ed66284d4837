/**
 * How a program is compiled (compile-program.ts says what each mode runs): "statepoint" for
 * `gc "statepoint-example"` code through rewrite-statepoints-for-gc, "plimmix" for `gc "plimmix"`
 * gcroot code with rootwalk's plugin, "plain" for llc alone.
 */
export type CompileMode = "statepoint" | "plimmix" | "plain";
