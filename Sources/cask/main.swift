import CaskPlatform

#if canImport(Glibc)
  import Glibc
#endif

// `cask`: see Docs/CLI.md. Parsing and help come from each subcommand's `CommandSpec`.
// First of all, before any file is opened: /dev/null on the standard descriptors that are closed.
_ = StandardStream.closedAtStart
// Then, before any secret is read: no core file and no same-user debugger can see one, and no
// secret stays in the environment (where /proc/PID/environ shows it and children inherit it).
CoreDumps.disable()
EnvironmentSecrets.captureAtStart()
exit(CaskCommand.main(Array(CommandLine.arguments.dropFirst())))
