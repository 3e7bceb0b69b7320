import CipherCask

/// `cask keys STORE [--prefix P] [--collection NAME] [--json]`.
enum KeysCommand: Subcommand {
  static let spec = CommandSpec(
    name: "keys",
    abstract: "List the keys of a store.",
    discussion: """
      Keys are sorted by their UTF-8 bytes, one per line. Control characters are shown escaped \
      (the U+0000 between a collection's name and an object's id as \\0); --json prints them \
      exactly. With --collection, the ids of that collection's objects are listed.
      """,
    arguments: [.store],
    options: [
      OptionSpec("prefix", value: "prefix", help: "Only keys (or ids) that start with this text."),
      OptionSpec("collection", value: "name", help: "List the ids of the objects of this collection."),
      .json,
    ] + OptionSpec.passwordOptions)

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
