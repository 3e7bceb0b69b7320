import Foundation

extension ArgumentSpec {
  /// `<store>`, the first argument of every store command.
  static let store = ArgumentSpec(name: "store", help: "The store's directory.")
}

extension OptionSpec {
  /// `--collection <name>` for commands that address single keys: the key is then the id of
  /// an object of that collection (stored under `name + U+0000 + id`).
  static let collectionForKeys = OptionSpec(
    "collection", value: "name",
    help: "Address the object with this id in the named collection instead of a plain key.")
}

/// Keys as the command line names and shows them.
enum KeyText {
  /// The store key for `<key>`, or for the id `<key>` in `--collection`.
  static func storeKey(_ arguments: ParsedArguments) throws -> String {
    let key = arguments.argument("key")
    guard let collection = arguments.option("collection") else { return key }
    return try collectionPrefix(collection, arguments.spec) + key
  }

  /// `name + U+0000`, after checking the name.
  static func collectionPrefix(_ name: String, _ spec: CommandSpec) throws -> String {
    guard !name.isEmpty, !name.utf8.contains(0) else {
      throw CLIError.usage("A collection name must be non-empty and must not contain U+0000", spec)
    }
    return name + "\u{0}"
  }

  /// A key for a line of text output: control characters (such as the U+0000 between a
  /// collection's name and an id) are shown as escapes, so that every key takes one line.
  /// `--json` prints keys exactly.
  static func display(_ key: String) -> String {
    var text = ""
    for scalar in key.unicodeScalars {
      switch scalar {
      case "\u{0}": text += "\\0"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        text += "\\u{" + String(scalar.value, radix: 16) + "}"
      default: text.unicodeScalars.append(scalar)
      }
    }
    return text
  }
}

/// JSON on standard output, for `--json`.
enum JSONOutput {
  static func write<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data = try encoder.encode(value)
    data.append(UInt8(ascii: "\n"))
    StandardStream.output.write(data)
  }
}
