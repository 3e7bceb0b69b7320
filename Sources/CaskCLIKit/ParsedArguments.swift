/// What the parser found for one command: positional arguments by name, option values and
/// flags. Lookups use the names of the command's `CommandSpec`.
package struct ParsedArguments: Sendable {
  package let spec: CommandSpec
  /// Positional arguments by the name of their `ArgumentSpec`.
  package var positionals: [String: String] = [:]
  /// Option values by long name.
  package var values: [String: String] = [:]
  /// The long names of the flags given.
  package var flags: Set<String> = []
  /// Every value of each repeatable option, in the order given (`values` has the last).
  package var lists: [String: [String]] = [:]

  package init(spec: CommandSpec) {
    self.spec = spec
  }

  /// A required positional argument (the parser has checked it is present).
  package func argument(_ name: String) -> String {
    guard let value = positionals[name] else {
      preconditionFailure("cask: '\(name)' is not a required argument of '\(spec.name)'")
    }
    return value
  }

  /// An optional positional argument.
  package func optionalArgument(_ name: String) -> String? {
    positionals[name]
  }

  /// The value of an option, or `nil` when it was not given.
  package func option(_ name: String) -> String? {
    values[name]
  }

  /// Every value of a repeatable option, in the order given; empty when it was not given.
  package func optionValues(_ name: String) -> [String] {
    lists[name] ?? []
  }

  /// The value of an option the spec marks as required (the parser has checked it is there).
  package func requiredOption(_ name: String) -> String {
    guard let value = values[name] else {
      preconditionFailure("cask: '--\(name)' is not a required option of '\(spec.name)'")
    }
    return value
  }

  /// Whether a flag was given.
  package func flag(_ name: String) -> Bool {
    flags.contains(name)
  }

  /// The value of an option that must be a positive integer.
  ///
  /// - Throws: `CLIError.usage` when the value is not one.
  package func positiveInteger(_ name: String) throws -> Int? {
    guard let text = values[name] else { return nil }
    guard let value = Int(text), value > 0 else {
      throw CLIError.usage(
        "The value \(MessageText.quoted(text)) is invalid for '--\(name)': expected a positive integer", spec)
    }
    return value
  }
}
