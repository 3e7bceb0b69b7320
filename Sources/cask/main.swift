#if canImport(Glibc)
  import Glibc
#endif

// `cask`: see Docs/CLI.md. Parsing and help come from each subcommand's `CommandSpec`.
// First of all, before any file is opened: /dev/null on the standard descriptors that are closed.
_ = StandardStream.closedAtStart
exit(CaskCommand.main(Array(CommandLine.arguments.dropFirst())))
