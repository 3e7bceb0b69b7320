/// HTTP request headers as `--header` takes them: `Name: value`.
package enum HeaderText {
  /// The name and value of `text`: the name is what comes before the first colon and must be
  /// an HTTP token (letters, digits and ``!#$%&'*+-.^_`|~``); the value is the rest without
  /// its surrounding spaces and tabs, and must be printable ASCII (spaces and tabs allowed).
  /// `nil` when `text` is not such a header (a CR or LF in it would start another header).
  package static func split(_ text: String) -> (name: String, value: String)? {
    let scalars = text.unicodeScalars
    guard let colon = scalars.firstIndex(of: ":") else { return nil }
    let name = scalars[..<colon]
    guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { return nil }
    var value = scalars[scalars.index(after: colon)...]
    while let first = value.first, first == " " || first == "\t" { value = value.dropFirst() }
    while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
    guard value.allSatisfy({ $0 == "\t" || (0x20...0x7E).contains($0.value) }) else { return nil }
    var nameText = ""
    nameText.unicodeScalars.append(contentsOf: name)
    var valueText = ""
    valueText.unicodeScalars.append(contentsOf: value)
    return (nameText, valueText)
  }

  private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "a"..."z", "A"..."Z", "0"..."9": return true
    default: return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
    }
  }
}
