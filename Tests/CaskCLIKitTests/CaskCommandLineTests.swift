import Foundation
import Testing

@testable import CaskCLIKit

@Suite("The root command line: subcommands, help and version")
struct CaskCommandLineTests {
  /// The text a command line asks to print, recording an issue when it asks to run a command.
  private func printed(_ words: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String? {
    switch try CaskCommandLine.interpret(words) {
    case .print(let text): return text
    case .run(let arguments):
      Issue.record("asked to run \(arguments.spec.name)", sourceLocation: sourceLocation)
      return nil
    }
  }

  /// The arguments a command line asks to run a subcommand with.
  private func run(_ words: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ParsedArguments? {
    switch try CaskCommandLine.interpret(words) {
    case .run(let arguments): return arguments
    case .print:
      Issue.record("asked to print instead of running", sourceLocation: sourceLocation)
      return nil
    }
  }

  /// The message of the usage error `words` give, which is about the root command (no spec).
  private func rootUsage(_ words: [String], sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    do {
      _ = try CaskCommandLine.interpret(words)
      Issue.record("no error was thrown", sourceLocation: sourceLocation)
    } catch CLIError.usage(let message, let spec) {
      #expect(spec == nil, "a root usage error named \(spec?.name ?? "")", sourceLocation: sourceLocation)
      return message
    } catch {
      Issue.record("expected a usage error, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
  }

  @Test("no words, -h, --help and help print the root help")
  func rootHelp() throws {
    let root = HelpText.rootHelp(subcommands: CommandSpec.subcommands)
    for words in [[], ["-h"], ["--help"], ["help"], ["help", "--help"]] {
      #expect(try printed(words) == root, "\(words)")
    }
  }

  @Test("--version prints the version and takes no arguments")
  func version() throws {
    #expect(try printed(["--version"]) == CaskCommandLine.version + "\n")
    #expect(rootUsage(["--version", "x"]) == "'--version' takes no arguments")
  }

  @Test("help <sub>, <sub> --help and <sub> -h print the same text")
  func subcommandHelpForms() throws {
    for spec in CommandSpec.subcommands {
      let expected = HelpText.help(for: spec)
      #expect(try printed(["help", spec.name]) == expected)
      #expect(try printed([spec.name, "--help"]) == expected)
      #expect(try printed([spec.name, "x", "-h"]) == expected)
    }
  }

  @Test("help of an unknown subcommand, or of two, is a usage error")
  func helpErrors() {
    #expect(rootUsage(["help", "nope"]) == "Unknown subcommand 'nope'")
    #expect(rootUsage(["help", "put", "get"]) == "'help' takes at most one subcommand name")
  }

  @Test("an unknown subcommand is quoted with its control characters escaped")
  func unknownSubcommand() {
    #expect(rootUsage(["nope"]) == "Unknown subcommand 'nope'")
    #expect(rootUsage(["no\npe"]) == "Unknown subcommand 'no\\npe'")
  }

  @Test("an option in the subcommand's place is quoted without its value")
  func unknownRootOption() {
    #expect(rootUsage(["--password=hunter2"]) == "Unknown option '--password'")
    #expect(rootUsage(["-x"]) == "Unknown option '-x'")
  }

  @Test("a subcommand runs with the words after it; -h after '--' is a key, not a request for help")
  func runsSubcommand() throws {
    let arguments = try #require(try run(["get", "store", "--", "-h"]))
    #expect(arguments.spec.name == "get")
    #expect(arguments.argument("store") == "store")
    #expect(arguments.argument("key") == "-h")
  }

  @Test("a subcommand's usage error names the subcommand")
  func subcommandUsageError() {
    do {
      _ = try CaskCommandLine.interpret(["put", "store"])
      Issue.record("no error was thrown")
    } catch CLIError.usage(let message, let spec) {
      #expect(message == "Missing expected argument '<key>'")
      #expect(spec?.name == "put")
    } catch {
      Issue.record("expected a usage error, got \(error)")
    }
  }

  @Test("every subcommand's spec names each option once, long and short")
  func uniqueOptionNames() {
    for spec in CommandSpec.subcommands {
      let names = spec.options.map(\.name) + [OptionSpec.help.name]
      #expect(Set(names).count == names.count, "\(spec.name): \(names)")
      let shorts = (spec.options + [OptionSpec.help]).compactMap(\.short)
      #expect(Set(shorts).count == shorts.count, "\(spec.name): \(shorts)")
    }
    let subcommands = CommandSpec.subcommands.map(\.name)
    #expect(Set(subcommands).count == subcommands.count)
  }
}
