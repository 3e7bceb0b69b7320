#if canImport(Glibc)
  import Glibc
#endif

// `cask`: see Docs/CLI.md. Parsing and help come from each subcommand's `CommandSpec`.
exit(CaskCommand.main(Array(CommandLine.arguments.dropFirst())))
