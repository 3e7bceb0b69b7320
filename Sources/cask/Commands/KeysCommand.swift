import CaskCLIKit
import CipherCask

/// `cask keys STORE [--prefix P] [--collection NAME] [--json]`.
enum KeysCommand: Subcommand {
  static var spec: CommandSpec { .keys }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let prefix = arguments.option("prefix") ?? ""
    let collection = arguments.option("collection")
    let separatorEnd = try collection.map { try KeyText.collectionPrefix($0, spec).utf8.count }
    let keys = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store -> [String] in
      guard let collection, let separatorEnd else { return try store.keys(withPrefix: prefix) }
      // The group's own index: O(ids of the collection), whatever else the store holds.
      let ids = try store.keys(inGroup: collection).map {
        String(decoding: $0.utf8.dropFirst(separatorEnd), as: UTF8.self)
      }
      return prefix.isEmpty ? ids : ids.filter { $0.utf8.starts(with: prefix.utf8) }
    }
    if arguments.flag("json") {
      try JSONOutput.write(keys)
      return
    }
    var text = ""
    for key in keys {
      text += KeyText.display(key) + "\n"
      if text.utf8.count >= 1 << 16 {
        StandardStream.output.write(text)
        text = ""
      }
    }
    StandardStream.output.write(text)
  }
}
