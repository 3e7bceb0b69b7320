import Foundation
import Testing

@testable import CaskCLIKit

@Suite("Help text: sections, usage line, wrapping")
struct HelpTextTests {
  /// The offset of `heading` in `text`, or `nil`.
  private func offset(of heading: String, in text: String) -> Int? {
    guard let range = text.range(of: heading) else { return nil }
    return text.distance(from: text.startIndex, to: range.lowerBound)
  }

  @Test("a command's help has OVERVIEW, USAGE, ARGUMENTS and OPTIONS, in that order")
  func sectionsInOrder() throws {
    let text = HelpText.help(for: sampleSpec)
    #expect(text.hasPrefix("OVERVIEW: A command to test the parser with.\n"))
    let offsets = try ["\nUSAGE: ", "\nARGUMENTS:\n", "\nOPTIONS:\n"].map { try #require(offset(of: $0, in: text)) }
    #expect(offsets == offsets.sorted())
  }

  @Test("a command without positional arguments has no ARGUMENTS section")
  func noArgumentsSection() {
    let text = HelpText.help(for: requiringSpec)
    #expect(!text.contains("ARGUMENTS:"))
    #expect(text.contains("\nOPTIONS:\n"))
  }

  @Test("OPTIONS lists every option with its short name and the choices, and -h, --help last")
  func optionsSection() throws {
    let text = HelpText.help(for: sampleSpec)
    #expect(text.contains("  -f, --file <file>"))
    #expect(text.contains("  -v, --verbose"))
    #expect(text.contains("(values: json, text)"))
    let options = try #require(text.range(of: "\nOPTIONS:\n")).upperBound
    let lastEntry = try #require(text[options...].split(separator: "\n").last)
    #expect(lastEntry.hasPrefix("  -h, --help"))
  }

  @Test("the usage line shows arguments, optional options in brackets, required ones bare, repeatable ones with ...")
  func usageLine() {
    #expect(
      HelpText.usage(sampleSpec)
        == "cask sample <first> [<second>] [--file <file>] [--verbose] [--format <format>] [--count <n>] "
        + "[--collection <name>] [--header <header> ...]")
    #expect(HelpText.usage(requiringSpec) == "cask requiring --id-key <key>")
  }

  @Test("the usage hint after an error points at the command's help, or the root's")
  func usageHint() {
    #expect(
      HelpText.usageHint(requiringSpec)
        == "Usage: cask requiring --id-key <key>\n  See 'cask help requiring' for more information.\n")
    #expect(HelpText.usageHint(nil) == "Usage: cask <subcommand>\n  See 'cask --help' for more information.\n")
  }

  @Test("the root help lists --version, -h and every subcommand with its abstract")
  func rootHelpSections() throws {
    let text = HelpText.rootHelp(subcommands: CommandSpec.subcommands)
    #expect(text.hasPrefix("OVERVIEW: \(CaskCommandLine.abstract)\n"))
    #expect(text.contains("\nUSAGE: cask <subcommand>\n"))
    #expect(text.contains("  --version"))
    let subcommands = try #require(text.range(of: "\nSUBCOMMANDS:\n")).upperBound
    for spec in CommandSpec.subcommands {
      #expect(text[subcommands...].contains("  \(spec.name) "), "\(spec.name) missing")
    }
    #expect(text.hasSuffix("\n  See 'cask help <subcommand>' for detailed help.\n"))
  }

  @Test("wrapped help keeps every line within 80 columns and every word of the text")
  func wrapping() {
    let text = String(repeating: "lorem ipsum dolor ", count: 30)
    let wrapped = HelpText.wrap(text, indent: 26)
    let lines = wrapped.split(separator: "\n")
    #expect(lines.count > 1)
    for line in lines {
      #expect(line.count <= 80, "\(line.count) columns: \(line)")
      #expect(line.hasPrefix(String(repeating: " ", count: 26)))
    }
    #expect(wrapped.split(whereSeparator: \.isWhitespace) == text.split(whereSeparator: \.isWhitespace))
  }

  @Test("wrapping keeps blank lines between paragraphs")
  func wrappingParagraphs() {
    #expect(HelpText.wrap("one\n\ntwo", indent: 2) == "  one\n\n  two")
  }

  /// The USAGE line is left whole (one line to copy), however long.
  @Test("no line of any subcommand's help but its USAGE line is wider than 80 columns")
  func subcommandHelpWidth() {
    for spec in CommandSpec.subcommands {
      for line in HelpText.help(for: spec).split(separator: "\n") where !line.hasPrefix("USAGE: ") {
        #expect(line.count <= 80, "cask \(spec.name): \(line)")
      }
    }
  }
}
