// cask-bench: CipherCask's benchmarks. Every figure is printed beside a bound or a peer measured
// in the same run, so results are ratios that mean something on a shared, noisy machine.
//
// The dispatcher is hand-written (no outside packages) and follows swift-argument-parser's
// conventions: `--help`, `-h` and `help <subcommand>` print the same text; errors go to stderr as
// `Error: ...` with a usage hint; exit 0 on success, 1 on failure, 64 on a usage error.
import Foundation

/// Every subcommand, in the order the root help lists them. Add new ones here.
let subcommands: [any BenchCommand.Type] = [
  CodecCommand.self,
  EngineCommand.self,
  IndexCommand.self,
  ProfileCommand.self,
  PeersCommand.self,
  ObjectsCommand.self,
  QueriesCommand.self,
  ColdCommand.self,
  CodersCommand.self,
  OutboxCommand.self,
  SyncCommand.self,
  RecoveryCommand.self,
  BackupCommand.self,
  ImportCommand.self,
  ReportCommand.self,
]

let rootUsage = "cask-bench <subcommand> [options]"

let rootHelp: String = {
  let width = (subcommands.map { $0.name.count }.max() ?? 0) + 2
  let list = subcommands.map { "  " + $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + $0.abstract }
  return """
    OVERVIEW: CipherCask's benchmarks; each figure sits beside a bound or peer measured in the same run.

    USAGE: \(rootUsage)

    SUBCOMMANDS:
    \(list.joined(separator: "\n"))

    OPTIONS:
      -h, --help  Show help information.

    See 'cask-bench help <subcommand>' for detailed help.
    """
}()

func isHelp(_ argument: String) -> Bool {
  argument == "-h" || argument == "--help"
}

/// Prints a usage error and returns the exit status for one.
func usageError(_ message: String, usage: String, helpCommand: String) -> Int32 {
  printToStandardError("Error: \(message)")
  printToStandardError("Usage: \(usage)")
  printToStandardError("  See '\(helpCommand)'.")
  return 64
}

@MainActor
func dispatch(_ arguments: [String]) -> Int32 {
  func rootError(_ message: String) -> Int32 {
    usageError(message, usage: rootUsage, helpCommand: "cask-bench --help")
  }
  guard let first = arguments.first else { return rootError("missing subcommand") }
  if isHelp(first) || arguments == ["help"] {
    print(rootHelp)
    return 0
  }
  if first == "help" {
    guard arguments.count == 2, let command = subcommands.first(where: { $0.name == arguments[1] }) else {
      return rootError("unknown subcommand '\(arguments.dropFirst().joined(separator: " "))'")
    }
    print(command.help)
    return 0
  }
  guard let command = subcommands.first(where: { $0.name == first }) else {
    return rootError("\(first.hasPrefix("-") ? "unknown option" : "unknown subcommand") '\(first)'")
  }
  let rest = Array(arguments.dropFirst())
  if rest.contains(where: isHelp) {
    print(command.help)
    return 0
  }
  do {
    try command.run(arguments: rest)
    return 0
  } catch let error as UsageError {
    return usageError(error.description, usage: command.usage, helpCommand: "cask-bench help \(command.name)")
  } catch {
    printToStandardError("Error: \(error)")
    return 1
  }
}

exit(dispatch(Array(CommandLine.arguments.dropFirst())))
