import Foundation
import Testing

@testable import CaskCLIKit

@Suite("Parsing options, flags and positional arguments")
struct ArgumentParserTests {
  @Test("an option's value may follow it as the next word or after '='; both give the same value")
  func optionValueForms() throws {
    #expect(try parse(["a", "--file", "x.json"]).option("file") == "x.json")
    #expect(try parse(["a", "--file=x.json"]).option("file") == "x.json")
    #expect(try parse(["a", "-f", "x.json"]).option("file") == "x.json")
  }

  @Test("the value after '=' is everything after the first '=', an empty one included")
  func inlineValueKeepsLaterEquals() throws {
    #expect(try parse(["a", "--file=k=v"]).option("file") == "k=v")
    #expect(try parse(["a", "--file="]).option("file") == "")
  }

  @Test("an option given twice keeps its last value")
  func lastValueWins() throws {
    #expect(try parse(["a", "--file", "one", "--file=two"]).option("file") == "two")
  }

  @Test("an option that was not given has no value")
  func absentOption() throws {
    let parsed = try parse(["a"])
    #expect(parsed.option("file") == nil)
    #expect(parsed.optionValues("header").isEmpty)
    #expect(try parsed.positiveInteger("count") == nil)
  }

  @Test("a flag is set by its long or short name and unset when absent")
  func flags() throws {
    #expect(try parse(["a", "--verbose"]).flag("verbose"))
    #expect(try parse(["a", "-v"]).flag("verbose"))
    #expect(try !parse(["a"]).flag("verbose"))
  }

  @Test("a flag given a value with '=' is refused")
  func flagWithValue() {
    #expect(usageMessage(["a", "--verbose=yes"]) == "The flag '--verbose' does not take a value")
  }

  @Test("positional arguments fill the spec's arguments in order, options anywhere between them")
  func positionalsInOrder() throws {
    let parsed = try parse(["one", "--verbose", "two"])
    #expect(parsed.argument("first") == "one")
    #expect(parsed.optionalArgument("second") == "two")
    #expect(parsed.flag("verbose"))
  }

  @Test("an optional argument may be left out; a required one may not")
  func missingArguments() throws {
    #expect(try parse(["one"]).optionalArgument("second") == nil)
    #expect(usageMessage([]) == "Missing expected argument '<first>'")
  }

  @Test("more words than arguments are refused with their count and the command's arguments, not the words")
  func extraArguments() {
    #expect(usageMessage(["a", "b", "secret"]) == "1 unexpected argument (sample takes <first> [<second>])")
    #expect(usageMessage(["a", "b", "c", "d"]) == "2 unexpected arguments (sample takes <first> [<second>])")
  }

  @Test("after '--' every word is positional, option-like words and a second '--' included")
  func doubleDashEndsOptions() throws {
    let parsed = try parse(["--", "--verbose", "-f"])
    #expect(parsed.argument("first") == "--verbose")
    #expect(parsed.optionalArgument("second") == "-f")
    #expect(!parsed.flag("verbose"))
    #expect(try parse(["--", "--"]).argument("first") == "--")
    #expect(try parse(["--file", "x", "--", "-k"]).option("file") == "x")
  }

  @Test("a lone '-' is a positional argument (standard input), also where a value is expected")
  func loneDash() throws {
    #expect(try parse(["-"]).argument("first") == "-")
    #expect(try parse(["a", "--file", "-"]).option("file") == "-")
  }

  @Test("an unknown long option is refused by its name, without its value")
  func unknownLongOption() {
    #expect(usageMessage(["a", "--nope"]) == "Unknown option '--nope'")
    let message = usageMessage(["a", "--nope=hunter2"])
    #expect(message == "Unknown option '--nope'")
  }

  @Test("an unknown short option is refused by its first letter only, so '-pSECRET' does not show SECRET")
  func unknownShortOption() {
    #expect(usageMessage(["a", "-x"]) == "Unknown option '-x'")
    #expect(usageMessage(["a", "-pSECRET"]) == "Unknown option '-p'")
    #expect(usageMessage(["a", "-fv"]) == "Unknown option '-f'")
  }

  @Test("a password option is refused with where a password comes from, and without the password")
  func passwordOptionRefused() throws {
    let message = try #require(usageMessage(["a", "--password=hunter2"]))
    #expect(message.contains("CASK_PASSWORD") && message.contains("--password-file"))
    #expect(!message.contains("hunter2"))
    let newPassword = try #require(usageMessage(["a", "--new-password", "hunter2"]))
    #expect(newPassword.contains("CASK_NEW_PASSWORD"))
  }

  @Test("an option without its value, at the end or before another option, is refused")
  func missingValue() {
    #expect(usageMessage(["a", "--file"]) == "Missing value for '--file <file>'")
    #expect(usageMessage(["a", "--file", "--verbose"]) == "Missing value for '--file <file>'")
    #expect(usageMessage(["a", "-f", "--"]) == "Missing value for '--file <file>'")
  }

  @Test("a required option that was not given is refused")
  func missingRequiredOption() throws {
    #expect(usageMessage([], requiringSpec) == "Missing expected argument '--id-key <key>'")
    #expect(try parse(["--id-key", "id"], requiringSpec).requiredOption("id-key") == "id")
  }

  @Test("a value outside an option's choices is refused, naming the choices; a choice is taken")
  func allowedValues() throws {
    #expect(
      usageMessage(["a", "--format", "xml"])
        == "The value 'xml' is invalid for '--format <format>': expected one of 'json', 'text'")
    #expect(
      usageMessage(["a", "--format", "jsno"])
        == "The value 'jsno' is invalid for '--format <format>': expected one of 'json', 'text' "
        + "(did you mean 'json'?)")
    #expect(try parse(["a", "--format=text"]).option("format") == "text")
  }

  @Test("a rejected choice is quoted with its control characters escaped")
  func rejectedChoiceIsEscaped() throws {
    let message = try #require(usageMessage(["a", "--format", "x\u{1B}[2J"]))
    #expect(!message.unicodeScalars.contains { MessageText.isControl($0) })
    #expect(message.contains("'x\\u{1b}[2J'"))
  }

  @Test("a count must be a decimal integer above zero")
  func positiveInteger() throws {
    #expect(try parse(["a", "--count", "12"]).positiveInteger("count") == 12)
    for bad in ["0", "-3", "1.5", "ten", ""] {
      #expect(
        usageMessage(["a", "--count=\(bad)"])
          == "The value '\(bad)' is invalid for '--count': expected a positive integer")
    }
  }

  @Test("a collection name must be non-empty and free of U+0000")
  func collectionName() throws {
    #expect(try parse(["a", "--collection", "users"]).option("collection") == "users")
    let expected = "A collection name must be non-empty and must not contain U+0000"
    #expect(usageMessage(["a", "--collection="]) == expected)
    #expect(usageMessage(["a", "--collection", "us\u{0}ers"]) == expected)
  }

  @Test("a repeatable option keeps every value in order; an invalid header is refused without its value")
  func repeatableHeaders() throws {
    let parsed = try parse(["a", "--header", "A: 1", "--header=B: 2"])
    #expect(parsed.optionValues("header") == ["A: 1", "B: 2"])
    #expect(parsed.option("header") == "B: 2")
    let message = try #require(usageMessage(["a", "--header", "A: 1", "--header", "Token secret"]))
    #expect(message.hasPrefix("The value of '--header <header>' must be 'Name: value'"))
    #expect(!message.contains("secret"))
  }

  @Test("a usage error names the command it is about, for its usage hint")
  func usageErrorNamesItsCommand() {
    do {
      _ = try parse([])
      Issue.record("no error was thrown")
    } catch CLIError.usage(_, let spec) {
      #expect(spec?.name == "sample")
    } catch {
      Issue.record("expected a usage error, got \(error)")
    }
  }

  @Test("-h and --help ask for help only before '--'")
  func asksForHelp() {
    #expect(ArgumentParser.asksForHelp(["a", "-h"]))
    #expect(ArgumentParser.asksForHelp(["--help", "a"]))
    #expect(!ArgumentParser.asksForHelp(["a", "--", "-h"]))
    #expect(!ArgumentParser.asksForHelp(["a", "b"]))
  }
}
