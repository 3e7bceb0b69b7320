/// The attachment section of a version 5 put (Docs/FORMAT.md, "Version 5: attached keys"): the
/// keys a record carries besides its own, each `group U+0000 text U+0000 id`, where `id` is
/// the owner key's part after its first U+0000. Only the groups and texts are written:
///
/// ```
/// groups(2), each: name length(2) name, texts(2), each: text length(2) text
/// ```
/// Every count is at least 1; names are non-empty; neither a name nor a text holds a 0 byte,
/// and both are valid UTF-8; every key spelled out is at most 65,535 bytes. The writer lists
/// groups and texts in byte order, each once.
enum AttachedKeys {
  /// The section for `keys` attached to `owner`, or `nil` when `keys` is empty.
  ///
  /// - Throws: `CaskError.invalidKey` when the owner has no group, or a key is not
  ///   `group U+0000 text U+0000 id` with the owner's id and a non-empty group.
  static func encode(_ keys: [String], owner: String) throws -> [UInt8]? {
    guard !keys.isEmpty else { return nil }
    let ownerBytes = Array(owner.utf8)
    guard let separator = ownerBytes.firstIndex(of: CaskFormat.keyGroupSeparator) else {
      throw CaskError.invalidKey(reason: "a key without a group carries no attached keys")
    }
    let id = ownerBytes[(separator + 1)...]
    var byGroup: [[UInt8]: Set<[UInt8]>] = [:]
    for key in keys {
      let bytes = Array(key.utf8)
      guard let split = Self.split(bytes, id: id), bytes.count <= CaskFormat.maximumKeyLength else {
        throw CaskError.invalidKey(reason: "an attached key is not its group, a text and its owner's id")
      }
      byGroup[split.group, default: []].insert(split.text)
    }
    var section: [UInt8] = []
    append(UInt16(byGroup.count), to: &section)
    for group in byGroup.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
      append(UInt16(group.count), to: &section)
      section += group
      let texts = byGroup[group, default: []].sorted { $0.lexicographicallyPrecedes($1) }
      guard texts.count <= Int(UInt16.max) else {
        throw CaskError.invalidKey(reason: "more than 65,535 keys attached in one group")
      }
      append(UInt16(texts.count), to: &section)
      for text in texts {
        append(UInt16(text.count), to: &section)
        section += text
      }
    }
    guard byGroup.count <= Int(UInt16.max) else {
      throw CaskError.invalidKey(reason: "attached keys in more than 65,535 groups")
    }
    return section
  }

  /// The group and text of `key` when it is `group 0 text 0 id`.
  private static func split(_ key: [UInt8], id: ArraySlice<UInt8>) -> (group: [UInt8], text: [UInt8])? {
    let zero = CaskFormat.keyGroupSeparator
    guard key.count >= id.count + 2, key.suffix(id.count).elementsEqual(id), key[key.count - id.count - 1] == zero,
      let first = key.firstIndex(of: zero), first > 0, first < key.count - id.count - 1
    else { return nil }
    let text = key[(first + 1)..<(key.count - id.count - 1)]
    guard !text.contains(zero) else { return nil }
    return (Array(key[..<first]), Array(text))
  }

  private static func append(_ value: UInt16, to bytes: inout [UInt8]) {
    bytes.append(UInt8(truncatingIfNeeded: value))
    bytes.append(UInt8(truncatingIfNeeded: value >> 8))
  }

  /// Calls `body` with each key `section` attaches to `owner` (the owner key's UTF-8 bytes),
  /// spelled out (valid only during the call), after checking the whole section.
  ///
  /// - Returns: `false`, having called `body` for nothing, when the section is malformed or
  ///   the owner has no group.
  @discardableResult
  static func forEachKey(
    in section: UnsafeRawBufferPointer, owner: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void
  ) -> Bool {
    guard let separator = owner.firstIndex(of: CaskFormat.keyGroupSeparator), isWellFormed(section, owner: owner)
    else { return false }
    let id = UnsafeRawBufferPointer(rebasing: owner[(separator + 1)...])
    withUnsafeTemporaryAllocation(byteCount: CaskFormat.maximumKeyLength, alignment: 1) { buffer in
      walk(section) { group, text in
        var length = 0
        for part in [group, text] {
          UnsafeMutableRawBufferPointer(rebasing: buffer[length..<length + part.count]).copyMemory(from: part)
          length += part.count
          buffer[length] = CaskFormat.keyGroupSeparator
          length += 1
        }
        UnsafeMutableRawBufferPointer(rebasing: buffer[length..<length + id.count]).copyMemory(from: id)
        length += id.count
        body(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
      }
    }
    return true
  }

  /// The keys `section` attaches to `owner`, or `nil` when it is malformed.
  static func keys(in section: UnsafeRawBufferPointer, owner: String) -> [String]? {
    var keys: [String] = []
    let ownerBytes = Array(owner.utf8)
    let valid = ownerBytes.withUnsafeBytes { ownerBuffer in
      forEachKey(in: section, owner: ownerBuffer) { keys.append(String(decoding: $0, as: UTF8.self)) }
    }
    return valid ? keys : nil
  }

  /// Whether `section` follows the layout above, every key it spells for `owner` fitting.
  static func isWellFormed(_ section: UnsafeRawBufferPointer, owner: UnsafeRawBufferPointer) -> Bool {
    guard let separator = owner.firstIndex(of: CaskFormat.keyGroupSeparator) else { return false }
    let idLength = owner.count - separator - 1
    var reader = ByteReader(section)
    guard let groups = reader.readUInt16(), groups > 0 else { return false }
    for _ in 0..<groups {
      guard let nameLength = reader.readUInt16(), nameLength > 0, let name = reader.readBytes(Int(nameLength)),
        !name.contains(CaskFormat.keyGroupSeparator), HintPayload.isValidUTF8(name),
        let texts = reader.readUInt16(), texts > 0
      else { return false }
      for _ in 0..<texts {
        guard let textLength = reader.readUInt16(), let text = reader.readBytes(Int(textLength)),
          !text.contains(CaskFormat.keyGroupSeparator), HintPayload.isValidUTF8(text),
          Int(nameLength) + Int(textLength) + 2 + idLength <= CaskFormat.maximumKeyLength
        else { return false }
      }
    }
    return reader.remaining == 0
  }

  /// Calls `body` with each group name and text of a well-formed section.
  private static func walk(
    _ section: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
  ) {
    var reader = ByteReader(section)
    let groups = reader.readUInt16() ?? 0
    for _ in 0..<groups {
      guard let nameLength = reader.readUInt16(), let name = reader.readBytes(Int(nameLength)),
        let texts = reader.readUInt16()
      else { return }
      for _ in 0..<texts {
        guard let textLength = reader.readUInt16(), let text = reader.readBytes(Int(textLength)) else { return }
        body(name, text)
      }
    }
  }
}
