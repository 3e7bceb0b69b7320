/// Turns the words after `cask <subcommand>` into `ParsedArguments`, following
/// swift-argument-parser's conventions:
///
/// - `--name value` and `--name=value` for options, `--name` for flags, `-x` for a short name;
/// - `--` ends the options: every later word is positional (so a key may start with `-`);
/// - a lone `-` is positional (it means standard input where a command accepts it);
/// - an option given twice keeps its last value.
///
/// Errors are `CLIError.usage`. They quote option names, and the value of an option only when
/// it must be one of a few fixed choices; never a positional word or a free-form value, which
/// may be a key or, by mistake, a password.
package struct ArgumentParser {
  package let spec: CommandSpec

  package init(spec: CommandSpec) {
    self.spec = spec
  }

  /// Whether the words ask for help (`-h` or `--help` before any `--`).
  package static func asksForHelp(_ words: [String]) -> Bool {
    for word in words {
      if word == "--" { return false }
      if word == "-h" || word == "--help" { return true }
    }
    return false
  }

  /// Parses the words after the subcommand's name.
  ///
  /// - Throws: `CLIError.usage` when the words do not fit the spec.
  /// - Complexity: O(*n* × *m*) for *n* words and *m* options.
  package func parse(_ words: [String]) throws -> ParsedArguments {
    var result = ParsedArguments(spec: spec)
    var positionals: [String] = []
    var index = 0
    var optionsEnded = false
    while index < words.count {
      let word = words[index]
      index += 1
      if optionsEnded || !OptionSyntax.isOption(word) {
        positionals.append(word)
      } else if word == "--" {
        optionsEnded = true
      } else {
        let (option, inlineValue) = try lookUp(word)
        if option.isFlag {
          guard inlineValue == nil else { throw usage("The flag '--\(option.name)' does not take a value") }
          result.flags.insert(option.name)
          continue
        }
        let value: String
        if let inlineValue {
          value = inlineValue
        } else if index < words.count,
          !OptionSyntax.isOption(words[index]) || (option.check == .positiveInteger && isNegativeNumber(words[index]))
        {
          // Prevents: `--batch-size -1` reported as a missing value rather than as a number
          // that is not positive.
          value = words[index]
          index += 1
        } else {
          throw usage("Missing value for '\(option.label)'")
        }
        if let allowed = option.allowedValues, !allowed.contains(value) {
          let choices = allowed.map { "'\($0)'" }.joined(separator: ", ")
          throw usage(
            "The value \(MessageText.quoted(value)) is invalid for '\(option.label)': expected one of \(choices)"
              + Suggestion.hint(value, in: allowed))
        }
        result.values[option.name] = value
        if option.isRepeatable { result.lists[option.name, default: []].append(value) }
      }
    }
    try assign(positionals, to: &result)
    for option in spec.options where option.isRequired && result.values[option.name] == nil {
      throw usage("Missing expected argument '\(option.label)'")
    }
    try checkValues(of: result)
    return result
  }

  /// The option a word names, and the value after `=` if any.
  private func lookUp(_ word: String) throws -> (OptionSpec, String?) {
    if let (name, value) = OptionSyntax.longOption(word) {
      if let option = spec.option(named: name) { return (option, value) }
      if let variable = OptionSpec.refusedPasswordNames[name] {
        throw usage(
          "Passwords are never taken as command-line arguments; use --\(name)-file, "
            + "\(variable), --\(name)-stdin or the prompt")
      }
      let hint = Suggestion.hint(name, in: spec.options.map(\.name) + ["help"], prefix: "--")
      throw usage("Unknown option \(MessageText.quoted("--" + name))\(hint)")
    }
    var afterDash = ""
    afterDash.unicodeScalars.append(contentsOf: word.unicodeScalars.dropFirst())
    let letters = Array(afterDash)
    guard letters.count == 1, let option = spec.option(short: letters[0]) else {
      // Only the first letter: `-pSECRET` must not show SECRET.
      throw usage("Unknown option \(MessageText.quoted("-" + String(letters.first ?? "-")))")
    }
    return (option, nil)
  }

  private func assign(_ positionals: [String], to result: inout ParsedArguments) throws {
    for (position, argument) in spec.arguments.enumerated() {
      if position < positionals.count {
        result.positionals[argument.name] = positionals[position]
      } else if !argument.isOptional {
        throw usage("Missing expected argument '<\(argument.name)>'")
      }
    }
    if positionals.count > spec.arguments.count {
      let extra = positionals.count - spec.arguments.count
      throw usage(
        "\(extra) unexpected argument\(extra == 1 ? "" : "s") (\(spec.name) takes "
          + "\(spec.arguments.map(\.usage).joined(separator: " ")))")
    }
  }

  /// Applies each option's `ValueCheck`, in the order of the spec's options.
  private func checkValues(of result: ParsedArguments) throws {
    for option in spec.options {
      guard let check = option.check, let value = result.values[option.name] else { continue }
      switch check {
      case .positiveInteger: _ = try result.positiveInteger(option.name)
      case .collectionName: _ = try KeyText.collectionPrefix(value, spec)
      case .header:
        // Never quoted: a header value is often a token.
        for header in option.isRepeatable ? result.optionValues(option.name) : [value]
        where HeaderText.split(header) == nil {
          throw usage(
            "The value of '\(option.label)' must be 'Name: value': a header name, a colon, and printable ASCII")
        }
      }
    }
  }

  /// Whether `word` is `-` followed by digits (a negative number, not an option).
  private func isNegativeNumber(_ word: String) -> Bool {
    let scalars = word.unicodeScalars.dropFirst()
    return word.unicodeScalars.first == "-" && !scalars.isEmpty
      && scalars.allSatisfy { $0.properties.numericType == .decimal && $0.isASCII }
  }

  private func usage(_ message: String) -> CLIError {
    CLIError.usage(message, spec)
  }
}
