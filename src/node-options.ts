/**
 * The Node.js options the service's process runs with (decision P218).
 *
 * `--min-semi-space-size=16` keeps V8's young generation at two 16 MiB semi-spaces, the size a busy service grows
 * to. Without it V8 shrinks the young generation whenever little is allocated for a while (an idle minute, a
 * database-bound phase) and grows it back only as objects survive collections, which the short-lived objects of a
 * cached answer seldom do: the service then collects five to ten times as often. V8 reads the option only when it
 * sets the heap up and Node refuses it in `NODE_OPTIONS`, so it goes on the command line: `npm start` and the
 * benches and tests that start the service pass it; `serve` started without it logs a warning. (Not in the first
 * line of `bin/seller-ops.js`: `env -S`, which a shebang needs for an option, is missing from BusyBox's `env`.)
 */
export const SERVICE_NODE_OPTIONS: readonly string[] = ['--min-semi-space-size=16'];

/** The service's options (P218) this process's Node was started without. */
export function missingServiceNodeOptions(): string[] {
  return SERVICE_NODE_OPTIONS.filter((option) => !process.execArgv.includes(option));
}
