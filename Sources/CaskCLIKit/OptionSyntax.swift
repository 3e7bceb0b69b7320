/// How the parser tells options from arguments, on Unicode scalars rather than Characters: a
/// combining mark after `-` or `=` (one Character with it) must not hide the dash or the equals
/// sign, or `--password=<U+0301>secret` would be reported as an unknown option, secret and all.
package enum OptionSyntax {
  /// Whether `word` is an option: it starts with `-` and is not `-` alone (standard input).
  /// `--` is an option word too (the end of the options).
  package static func isOption(_ word: String) -> Bool {
    word.unicodeScalars.first == "-" && word != "-"
  }

  /// The name and inline value of a long option: `--name=value` gives `("name", "value")`,
  /// `--name` gives `("name", nil)`. The value is everything after the first `=`.
  package static func longOption(_ word: String) -> (name: String, value: String?)? {
    let scalars = word.unicodeScalars
    guard scalars.starts(with: "--".unicodeScalars) else { return nil }
    let body = scalars.dropFirst(2)
    guard let equals = body.firstIndex(of: "=") else { return (string(body), nil) }
    return (string(body[..<equals]), string(body[body.index(after: equals)...]))
  }

  /// The word with any inline value (`=...`) left out: what a message may quote of an option.
  package static func withoutValue(_ word: String) -> String {
    guard let equals = word.unicodeScalars.firstIndex(of: "=") else { return word }
    return string(word.unicodeScalars[..<equals])
  }

  private static func string(_ scalars: Substring.UnicodeScalarView) -> String {
    var text = ""
    text.unicodeScalars.append(contentsOf: scalars)
    return text
  }
}
