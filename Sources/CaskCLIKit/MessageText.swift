/// Words the user typed, as error messages quote them.
package enum MessageText {
  /// `'word'`, with every control character (C0, DEL, C1, and the Unicode line and paragraph
  /// separators) written as `\u{..}` (`\n`, `\r` and `\t` as such), so that a quoted word can
  /// neither break a one-line message nor send a terminal escape sequence.
  package static func quoted(_ word: some StringProtocol) -> String {
    "'" + escaped(word) + "'"
  }

  /// `text` with its control characters escaped as `quoted(_:)` does, without the quotes: for
  /// text from outside (a server's error message) that goes into a one-line message.
  package static func escaped(_ word: some StringProtocol) -> String {
    var text = ""
    for scalar in word.unicodeScalars {
      switch scalar {
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where isControl(scalar):
        text += "\\u{" + String(scalar.value, radix: 16) + "}"
      default: text.unicodeScalars.append(scalar)
      }
    }
    return text
  }

  /// Whether `scalar` is a control character a message must not contain raw.
  package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
  }
}
