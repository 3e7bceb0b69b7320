import Foundation
import Testing

@testable import CaskCLIKit

@Suite("Escaping what a message or a listing shows: MessageText, KeyText, HeaderText, OptionSyntax")
struct TextEscapingTests {
  @Test("a quoted word shows \\n, \\r and \\t, and every other control character as \\u{..}")
  func quotedEscapes() {
    #expect(MessageText.quoted("a\nb\rc\td") == "'a\\nb\\rc\\td'")
    #expect(MessageText.quoted("\u{1B}[31m") == "'\\u{1b}[31m'")
    #expect(MessageText.quoted("\u{7F}\u{85}\u{9F}") == "'\\u{7f}\\u{85}\\u{9f}'")
    #expect(MessageText.quoted("a\u{2028}b\u{2029}") == "'a\\u{2028}b\\u{2029}'")
    #expect(MessageText.escaped("plain é 日本") == "plain é 日本")
  }

  @Test("control characters are C0, DEL, C1 and the line and paragraph separators, nothing else")
  func controlBoundaries() {
    let control: [UInt32] = [0x00, 0x1F, 0x7F, 0x80, 0x9F, 0x2028, 0x2029]
    let printable: [UInt32] = [0x20, 0x7E, 0xA0, 0x2027, 0x202A]
    for value in control { #expect(MessageText.isControl(Unicode.Scalar(value)!), "U+\(value)") }
    for value in printable { #expect(!MessageText.isControl(Unicode.Scalar(value)!), "U+\(value)") }
  }

  @Test("a key shows the collection separator as \\0 and other control characters escaped, on one line")
  func keyDisplay() {
    #expect(KeyText.display("users\u{0}ann") == "users\\0ann")
    #expect(KeyText.display("a\nb\r\t") == "a\\nb\\r\\t")
    #expect(KeyText.display("\u{1B}]0;x\u{7}") == "\\u{1b}]0;x\\u{7}")
    #expect(KeyText.display("k\u{2028}") == "k\\u{2028}")
    #expect(KeyText.display("plain-key é") == "plain-key é")
  }

  @Test("a collection's prefix is its name and U+0000; an empty name or one with U+0000 is refused")
  func collectionPrefix() throws {
    #expect(try KeyText.collectionPrefix("users", sampleSpec) == "users\u{0}")
    let expected = "A collection name must be non-empty and must not contain U+0000"
    #expect(usageMessage(of: { _ = try KeyText.collectionPrefix("", sampleSpec) }) == expected)
    #expect(usageMessage(of: { _ = try KeyText.collectionPrefix("a\u{0}b", sampleSpec) }) == expected)
  }

  @Test("the store key of <key> is the key itself, or the id under the --collection prefix")
  func storeKey() throws {
    #expect(try KeyText.storeKey(CaskCommandLineParse.get(["s", "k"])) == "k")
    #expect(try KeyText.storeKey(CaskCommandLineParse.get(["s", "ann", "--collection", "users"])) == "users\u{0}ann")
  }

  @Test("a header is a token, a colon and printable ASCII; the value loses its surrounding blanks only")
  func headerSplit() throws {
    let plain = try #require(HeaderText.split("Authorization: Bearer abc"))
    #expect(plain.name == "Authorization" && plain.value == "Bearer abc")
    let tight = try #require(HeaderText.split("X-Id:42"))
    #expect(tight.name == "X-Id" && tight.value == "42")
    let padded = try #require(HeaderText.split("A: \t x \t y \t"))
    #expect(padded.value == "x \t y")
    let colons = try #require(HeaderText.split("A: b:c"))
    #expect(colons.value == "b:c")
    let empty = try #require(HeaderText.split("A:"))
    #expect(empty.value == "")
  }

  @Test("a header without a colon, with no name, a name that is no token, or a CR, LF or non-ASCII value is refused")
  func headerRefusals() {
    for text in ["no colon", ": value", "Na me: v", "Näme: v", "A: one\r\nB: two", "A: one\ntwo", "A: é", "A: \u{7F}"] {
      #expect(HeaderText.split(text) == nil, "\(text.debugDescription) was taken")
    }
  }

  @Test("an option word starts with '-' but is not '-' alone; '--' is one")
  func optionWords() {
    #expect(OptionSyntax.isOption("-x"))
    #expect(OptionSyntax.isOption("--x"))
    #expect(OptionSyntax.isOption("--"))
    #expect(!OptionSyntax.isOption("-"))
    #expect(!OptionSyntax.isOption("x-"))
    #expect(!OptionSyntax.isOption(""))
  }

  @Test("a long option's name and value are split at the first '=', on scalars, so a combining mark hides neither")
  func longOptionSplit() throws {
    let plain = try #require(OptionSyntax.longOption("--name=a=b"))
    #expect(plain.name == "name" && plain.value == "a=b")
    let bare = try #require(OptionSyntax.longOption("--name"))
    #expect(bare.name == "name" && bare.value == nil)
    #expect(OptionSyntax.longOption("-n") == nil)
    let combining = try #require(OptionSyntax.longOption("--password=\u{301}secret"))
    #expect(combining.name == "password" && combining.value == "\u{301}secret")
    #expect(OptionSyntax.withoutValue("--password=\u{301}secret") == "--password")
    #expect(OptionSyntax.withoutValue("--plain") == "--plain")
  }
}

/// Parses the words after `cask get`.
private enum CaskCommandLineParse {
  static func get(_ words: [String]) throws -> ParsedArguments {
    try ArgumentParser(spec: CommandSpec.get).parse(words)
  }
}
