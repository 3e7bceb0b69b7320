/// Keys as the command line names and shows them.
package enum KeyText {
  /// The store key for `<key>`, or for the id `<key>` in `--collection`.
  ///
  /// - Throws: `CLIError.usage` for a collection name that is empty or holds U+0000.
  package static func storeKey(_ arguments: ParsedArguments) throws -> String {
    let key = arguments.argument("key")
    guard let collection = arguments.option("collection") else { return key }
    return try collectionPrefix(collection, arguments.spec) + key
  }

  /// `name + U+0000`, after checking the name.
  ///
  /// - Throws: `CLIError.usage` when `name` is empty or holds U+0000.
  package static func collectionPrefix(_ name: String, _ spec: CommandSpec) throws -> String {
    guard !name.isEmpty, !name.utf8.contains(0) else {
      throw CLIError.usage("A collection name must be non-empty and must not contain U+0000", spec)
    }
    return name + "\u{0}"
  }

  /// A key for a line of text output: control characters (such as the U+0000 between a
  /// collection's name and an id; all that `MessageText.isControl` names, C1 and U+2028/U+2029
  /// included) are shown as escapes, so that every key takes one line and sends no terminal
  /// escape. `--json` prints keys exactly.
  package static func display(_ key: String) -> String {
    var text = ""
    for scalar in key.unicodeScalars {
      switch scalar {
      case "\u{0}": text += "\\0"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where MessageText.isControl(scalar):
        text += "\\u{" + String(scalar.value, radix: 16) + "}"
      default: text.unicodeScalars.append(scalar)
      }
    }
    return text
  }
}
