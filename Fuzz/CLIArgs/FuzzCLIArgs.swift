import CaskCLIKit
import Foundation
import FuzzSupport

/// fuzz-cli-args: `cask`'s command line (`CaskCommandLine.interpret`, the `ArgumentParser` of
/// every subcommand, the value checks and the help), on any words.
///
/// Input: the words of a command line separated by NUL bytes (as the kernel hands `argv` to a
/// process; invalid UTF-8 is repaired as `CommandLine.arguments` repairs it). Each input runs
/// once as the whole command line, and once after each subcommand's name. Whatever the words:
/// - only `CLIError.usage` is thrown, whose message is one line without control characters,
///   and whose usage hint names the subcommand typed (or the root);
/// - the message does not depend on a password given by mistake (`--password=X`,
///   `--new-password X`, ...) or on the value of a `--header` (a token, often): with every such
///   value replaced by a marker, the outcome is the same and the marker appears in no message;
/// - `-h`/`--help` before `--` always prints that subcommand's help, `--version` alone the
///   version, and no word list prints anything else;
/// - a parse that succeeds has every required argument and option, only the spec's names,
///   values within their choices and checks, and parses to the same result again when written
///   out canonically (`--name=value`, flags, `--`, the positionals).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCLIArgs(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  CLIArgsTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum CLIArgsTarget {
  /// Put in place of every password-looking value; no message may contain it.
  static let marker = "fuzz-secret-7f3a"
  static let rootHelp = HelpText.rootHelp(subcommands: CommandSpec.subcommands)
  /// Each subcommand's help and usage hint by name, written once per process: they depend on
  /// the spec only, and every input compares against them.
  static let helps = Dictionary(uniqueKeysWithValues: CommandSpec.subcommands.map { ($0.name, HelpText.help(for: $0)) })
  static let usageHints = Dictionary(
    uniqueKeysWithValues: CommandSpec.subcommands.map { ($0.name, HelpText.usageHint($0)) })
  static let rootUsageHint = HelpText.usageHint(nil)
  /// The options whose values are secrets: the refused password options and `--header`.
  static let secretNames = OptionSpec.refusedPasswordNames.keys.sorted() + ["header"]

  /// The outcome of one command line, comparable.
  enum Outcome: Equatable {
    case print(String)
    case run(
      name: String, positionals: [String: String], values: [String: String], lists: [String: [String]],
      flags: Set<String>)
    case usage(message: String, command: String?)
  }

  static func test(_ bytes: UnsafeRawBufferPointer) {
    let words = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
      String(decoding: $0, as: UTF8.self)
    }
    // An empty input is the empty command line, not one empty word.
    let line = bytes.isEmpty ? [] : words
    check(line)
    for spec in CommandSpec.subcommands {
      check([spec.name] + line)
    }
  }

  static func check(_ argv: [String]) {
    let outcome = interpret(argv)
    switch outcome {
    case .usage(let message, let command):
      FuzzReplay.check(!message.isEmpty, "an empty usage message")
      FuzzReplay.check(
        !message.unicodeScalars.contains(where: isControl),
        "a control character in the message \(message.debugDescription)")
      let typed = argv.first.flatMap { name in CommandSpec.subcommands.first { $0.name == name } }
      FuzzReplay.check(command == nil || command == typed?.name, "the usage hint is for '\(command ?? "")'")
      let hint = typed.flatMap { $0.name == command ? usageHints[$0.name] : nil } ?? rootUsageHint
      FuzzReplay.check(hint.split(separator: "\n").count == 2, "the usage hint is not two lines")
    case .print(let text):
      FuzzReplay.check(text.hasSuffix("\n"), "printed text without a final newline")
    case .run:
      break
    }
    checkHelpAndVersion(argv, outcome)
    if case .run = outcome { checkParsed(argv) }
    let masked = maskingSecrets(argv)
    if masked != argv {
      let again = interpret(masked)
      FuzzReplay.check(sameShape(outcome, again), "a secret value changed the outcome: \(outcome) vs \(again)")
      // The fuzzer learns the marker from this very comparison and types it itself: then the
      // message may quote it from a word that is no secret.
      if case .usage(let message, _) = again, !argv.contains(where: { $0.contains(marker) }) {
        FuzzReplay.check(!message.contains(marker), "a secret value in the message \(message.debugDescription)")
      }
    }
  }

  /// Equal outcomes, except that the option values of two runs may differ (the secrets were
  /// masked in one of them) as long as the same options were given.
  static func sameShape(_ one: Outcome, _ other: Outcome) -> Bool {
    guard
      case .run(let name, let positionals, let values, let lists, let flags) = one,
      case .run(let otherName, let otherPositionals, let otherValues, let otherLists, let otherFlags) = other
    else { return one == other }
    return name == otherName && positionals == otherPositionals && flags == otherFlags
      && Set(values.keys) == Set(otherValues.keys) && lists.mapValues(\.count) == otherLists.mapValues(\.count)
  }

  static func interpret(_ argv: [String]) -> Outcome {
    do {
      switch try CaskCommandLine.interpret(argv) {
      case .print(let text):
        return .print(text)
      case .run(let parsed):
        return .run(
          name: parsed.spec.name, positionals: parsed.positionals, values: parsed.values, lists: parsed.lists,
          flags: parsed.flags)
      }
    } catch CLIError.usage(let message, let spec) {
      return .usage(message: message, command: spec?.name)
    } catch {
      FuzzReplay.check(false, "an error that is not a usage error: \(error)")
      return .usage(message: "", command: nil)
    }
  }

  /// Help and version are answered exactly when asked for.
  static func checkHelpAndVersion(_ argv: [String], _ outcome: Outcome) {
    guard let first = argv.first else {
      FuzzReplay.check(outcome == .print(rootHelp), "no words did not print the root help")
      return
    }
    if first == "-h" || first == "--help" {
      FuzzReplay.check(outcome == .print(rootHelp), "\(first) did not print the root help")
    } else if first == "--version" {
      let expected: Outcome = argv.count == 1 ? .print(CaskCommandLine.version + "\n") : outcome
      FuzzReplay.check(outcome == expected, "--version alone did not print the version")
      if argv.count > 1 { FuzzReplay.check(!isPrint(outcome), "--version with arguments printed") }
    } else if let spec = CommandSpec.subcommands.first(where: { $0.name == first }) {
      let asks = ArgumentParser.asksForHelp(Array(argv.dropFirst()))
      FuzzReplay.check(
        asks ? outcome == .print(helps[spec.name] ?? HelpText.help(for: spec)) : !isPrint(outcome),
        "help of '\(first)' \(asks ? "not printed" : "printed unasked")")
    } else if first != "help" {
      FuzzReplay.check(!isPrint(outcome), "an unknown first word printed something")
    }
  }

  /// The parse result follows its spec, and parses again to itself from its canonical form.
  static func checkParsed(_ argv: [String]) {
    guard case .run(let parsed)? = try? CaskCommandLine.interpret(argv) else {
      FuzzReplay.check(false, "a command line that ran once did not run again")
      return
    }
    let spec = parsed.spec
    FuzzReplay.check(spec.name == argv.first, "ran '\(spec.name)' for '\(argv.first ?? "")'")
    for argument in spec.arguments where !argument.isOptional {
      FuzzReplay.check(parsed.positionals[argument.name] != nil, "the required <\(argument.name)> is missing")
      _ = parsed.argument(argument.name)
    }
    let argumentNames = Set(spec.arguments.map(\.name))
    FuzzReplay.check(Set(parsed.positionals.keys).isSubset(of: argumentNames), "a positional of no name")
    for option in spec.options where option.isRequired {
      _ = parsed.requiredOption(option.name)
    }
    for (name, value) in parsed.values {
      guard let option = spec.option(named: name), !option.isFlag else {
        FuzzReplay.check(false, "a value for '\(name)', which takes none")
        return
      }
      if let allowed = option.allowedValues {
        FuzzReplay.check(allowed.contains(value), "'\(name)' took a value outside its choices")
      }
      switch option.check {
      case .positiveInteger?:
        FuzzReplay.check((Int(value) ?? 0) > 0, "'\(name)' took a value that is not a positive integer")
      case .collectionName?:
        FuzzReplay.check(!value.isEmpty && !value.utf8.contains(0), "'\(name)' took an invalid collection name")
      case .header?:
        for header in parsed.optionValues(name) {
          FuzzReplay.check(isHeader(header), "'\(name)' took a value that is not a header")
        }
      case nil:
        break
      }
      if option.isRepeatable {
        FuzzReplay.check(parsed.lists[name]?.last == value, "'\(name)' lost its occurrences")
      }
    }
    FuzzReplay.check(
      parsed.lists.keys.allSatisfy { spec.option(named: $0)?.isRepeatable == true },
      "a list for an option that is not repeatable")
    for flag in parsed.flags {
      FuzzReplay.check(spec.option(named: flag)?.isFlag == true, "the flag '\(flag)' is not a flag of the spec")
    }
    var canonical = [spec.name]
    for (name, value) in parsed.values.sorted(by: { $0.key < $1.key }) {
      canonical += (parsed.lists[name] ?? [value]).map { "--\(name)=\($0)" }
    }
    canonical += parsed.flags.sorted().map { "--\($0)" }
    canonical.append("--")
    canonical += spec.arguments.compactMap { parsed.positionals[$0.name] }
    let expected = Outcome.run(
      name: spec.name, positionals: parsed.positionals, values: parsed.values, lists: parsed.lists,
      flags: parsed.flags)
    let again = interpret(canonical)
    FuzzReplay.check(again == expected, "the canonical form \(canonical) parsed to \(again)")
  }

  /// `argv` with every secret value replaced by `marker`: the text after `--password=` or
  /// `--new-password=` and the word after `--password` or `--new-password` when the parser
  /// would take it as a value; and the value part of a `--header` (after its colon; the whole
  /// word when it has no colon). A header value with control characters stays, as masking it
  /// would make an invalid header valid. Words after `--` (past the first word) are arguments,
  /// not options, and stay.
  static func maskingSecrets(_ argv: [String]) -> [String] {
    var masked = argv
    var index = 0
    while index < masked.count {
      let word = masked[index]
      if word == "--" && index > 0 { break }
      // One parse of the word; a word names at most one option.
      if let (given, value) = OptionSyntax.longOption(word), let name = secretNames.first(where: { $0 == given }) {
        if let value {
          masked[index] = "--\(name)=" + mask(value, of: name)
        } else if index + 1 < masked.count, !OptionSyntax.isOption(masked[index + 1]) {
          masked[index + 1] = mask(masked[index + 1], of: name)
          index += 1
        }
      }
      index += 1
    }
    return masked
  }

  /// `marker` for a password, `maskingHeader(value)` for a header.
  static func mask(_ value: String, of name: String) -> String {
    name == "header" ? maskingHeader(value) : marker
  }

  /// A header with its value replaced by `marker`, when that keeps it as valid as it was.
  static func maskingHeader(_ header: String) -> String {
    let scalars = header.unicodeScalars
    guard let colon = scalars.firstIndex(of: ":") else { return marker }
    let value = scalars[scalars.index(after: colon)...]
    guard value.allSatisfy({ $0 == "\t" || (0x20...0x7E).contains($0.value) }) else { return header }
    var name = ""
    name.unicodeScalars.append(contentsOf: scalars[..<colon])
    return name + ": " + marker
  }

  /// `Name: value` with a token name and a printable ASCII value (the harness's own reading of
  /// `HeaderText.split`'s rule).
  static func isHeader(_ header: String) -> Bool {
    let scalars = header.unicodeScalars
    guard let colon = scalars.firstIndex(of: ":"), colon != scalars.startIndex else { return false }
    let token = "!#$%&'*+-.^_`|~".unicodeScalars
    let nameIsToken = scalars[..<colon].allSatisfy {
      ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || token.contains($0)
    }
    let valueIsPrintable = scalars[scalars.index(after: colon)...].allSatisfy {
      $0 == "\t" || (0x20...0x7E).contains($0.value)
    }
    return nameIsToken && valueIsPrintable
  }

  static func isPrint(_ outcome: Outcome) -> Bool {
    if case .print = outcome { return true }
    return false
  }

  /// C0, DEL, C1 and the Unicode line and paragraph separators.
  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
  }

  /// Command lines of every subcommand's shape, right and wrong (each also runs after every
  /// subcommand's name).
  static func seeds() throws -> [(String, Data)] {
    let lines: [(String, [String])] = [
      ("empty", []),
      ("help-flag", ["--help"]),
      ("help-short", ["-h"]),
      ("help-subcommand", ["help", "import"]),
      ("help-two-names", ["help", "get", "put"]),
      ("version", ["--version"]),
      ("version-extra", ["--version", "x"]),
      ("store-only", ["notes.cask"]),
      ("store-key", ["notes.cask", "todo"]),
      ("store-key-collection", ["notes.cask", "evt-1", "--collection", "events"]),
      ("store-key-collection-inline", ["notes.cask", "evt-1", "--collection=events"]),
      ("collection-empty", ["s", "k", "--collection="]),
      ("file", ["s", "k", "--file", "value.bin", "--password-file", "pw.txt"]),
      ("file-missing-value", ["s", "k", "--file"]),
      ("dash-dash", ["s", "--", "-1"]),
      ("dash", ["s", "-"]),
      ("import", ["s", "events.jsonl", "--collection", "events", "--id-key", "eventId", "--batch-size", "500"]),
      ("import-batch-zero", ["s", "f", "--collection", "c", "--id-key", "id", "--batch-size", "0"]),
      ("import-stdin", ["s", "-", "--collection", "c", "--id-key", "id", "--password-stdin"]),
      ("export-format", ["s", "out", "--format", "json", "--collection", "events"]),
      ("export-bad-format", ["s", "out", "--format=xml"]),
      ("keys", ["s", "--prefix", "a", "--json"]),
      ("flag-with-value", ["s", "--json=yes"]),
      ("unknown-option", ["s", "--frob"]),
      ("unknown-short", ["s", "-x"]),
      ("short-cluster", ["s", "-xyz"]),
      ("password-inline", ["s", "k", "--password=hunter2"]),
      ("password-word", ["s", "k", "--password", "hunter2"]),
      ("new-password", ["s", "--new-password", "correct horse", "--new-password-stdin"]),
      ("passwd", ["s", "--password-file", "old", "--new-password-file", "new"]),
      ("encrypt", ["in.pdf", "out.rncryptor", "--force"]),
      ("extra-arguments", ["a", "b", "c", "d"]),
      ("repeated-option", ["s", "k", "--collection", "a", "--collection", "b"]),
      ("help-after-dash-dash", ["s", "--", "--help"]),
      ("unknown-subcommand", ["frobnicate"]),
      ("mistyped-subcommand", ["improt"]),
      ("mistyped-option", ["keys", "s", "--prefx", "a"]),
      ("help-help", ["help", "help"]),
      ("completion", ["completion", "bash"]),
      ("import-batch-negative", ["s", "f", "--collection", "c", "--id-key", "id", "--batch-size", "-1"]),
      ("export-jsonl-dash", ["s", "-", "--format", "jsonl", "--skip-damaged", "--json"]),
      ("root-option-with-value", ["--password=hunter2", "get"]),
      (
        "pull",
        [
          "s", "https://api.example.com/users?page=1", "--collection", "users", "--id-key", "id", "--header",
          "Authorization: Bearer abc123", "--header=X-Api-Key: k", "--envelope", "result", "--next-key", "next",
        ]
      ),
      ("pull-pages", ["s", "http://127.0.0.1:8080/users", "--collection=u", "--id-key=uid", "--page-parameter", "p"]),
      ("pull-max-pages", ["s", "http://127.0.0.1:8080/u", "--collection", "c", "--id-key", "id", "--max-pages=0"]),
      ("header-without-colon", ["s", "u", "--collection", "c", "--id-key", "id", "--header", "Bearer abc123"]),
      ("header-with-newline", ["s", "u", "--collection", "c", "--id-key", "id", "--header", "A: b\r\nX: y"]),
      ("import-url", ["s", "https://example.com/e.jsonl", "--collection", "e", "--id-key", "id", "--header", "A: b"]),
      ("unicode", ["s", "cl\u{e9}", "--collection", "\u{1F511}"]),
    ]
    return lines.map { name, words in (name, Data(words.joined(separator: "\u{0}").utf8)) }
  }
}
