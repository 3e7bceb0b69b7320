import Foundation
import Testing

@testable import CaskCLIKit

/// A command of every kind of argument the parser knows, so that each rule is tested once,
/// apart from the subcommands that happen to use it.
let sampleSpec = CommandSpec(
  name: "sample",
  abstract: "A command to test the parser with.",
  arguments: [
    ArgumentSpec(name: "first", help: "The first word."),
    ArgumentSpec(name: "second", help: "An optional second word.", isOptional: true),
  ],
  options: [
    OptionSpec("file", short: "f", value: "file", help: "A file."),
    OptionSpec("verbose", short: "v", help: "Say more."),
    OptionSpec("format", value: "format", help: "A format.", allowedValues: ["json", "text"]),
    OptionSpec("count", value: "n", help: "A count.", check: .positiveInteger),
    OptionSpec("collection", value: "name", help: "A collection.", check: .collectionName),
    OptionSpec("header", value: "header", help: "A header.", check: .header, isRepeatable: true),
  ])

/// `sampleSpec` with an option the command cannot run without.
let requiringSpec = CommandSpec(
  name: "requiring",
  abstract: "A command with a required option.",
  options: [OptionSpec("id-key", value: "key", help: "The id's field.", isRequired: true)])

/// Parses `words` as arguments of `spec`.
func parse(_ words: [String], _ spec: CommandSpec = sampleSpec) throws -> ParsedArguments {
  try ArgumentParser(spec: spec).parse(words)
}

/// The message of the usage error that parsing `words` throws, recording an issue when it
/// throws none or another error.
func usageMessage(
  _ words: [String], _ spec: CommandSpec = sampleSpec, sourceLocation: SourceLocation = #_sourceLocation
) -> String? {
  usageMessage(of: { _ = try parse(words, spec) }, sourceLocation: sourceLocation)
}

/// The message of the usage error `body` throws, recording an issue when it throws none or
/// another error.
func usageMessage(of body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
  do {
    try body()
    Issue.record("no error was thrown", sourceLocation: sourceLocation)
  } catch CLIError.usage(let message, _) {
    return message
  } catch {
    Issue.record("expected a usage error, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}
