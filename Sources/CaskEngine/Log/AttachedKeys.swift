#if canImport(Glibc)
  import Glibc
#endif

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
  /// The section for `keys` and `entries` attached to `owner`, or `nil` when both are empty.
  ///
  /// The keys' bytes are gathered into one buffer and their (group, text) parts sorted as
  /// ranges of it. Prevents: a byte array per key and per group, hashed byte by byte into sets
  /// (about a tenth of a save with three indexes).
  ///
  /// - Parameters:
  ///   - keys: whole keys, each `group U+0000 text U+0000 id` with the owner's id.
  ///   - entries: keys given as their group and text (the id is the owner's). Prevents: a
  ///     layer that has the parts joining them into a string for this function to split again.
  /// - Throws: `CaskError.invalidKey` when the owner has no group, or a key is not
  ///   `group U+0000 text U+0000 id` with the owner's id and a non-empty group.
  /// - Complexity: O(n log n) comparisons for n keys.
  static func encode(_ keys: [String], entries: [AttachedEntry] = [], owner: String) throws -> [UInt8]? {
    guard !keys.isEmpty || !entries.isEmpty else { return nil }
    if keys.isEmpty { return try encode(entries, owner: owner) }
    var bytes: [UInt8] = []
    let partsBytes = entries.reduce(keys.reduce(0) { $0 + $1.utf8.count }) {
      $0 + $1.group.utf8.count + $1.text.utf8.count
    }
    bytes.reserveCapacity(owner.utf8.count + partsBytes)
    bytes.append(contentsOf: owner.utf8)
    guard let separator = bytes.firstIndex(of: CaskFormat.keyGroupSeparator) else {
      throw CaskError.invalidKey(reason: "a key without a group carries no attached keys")
    }
    let id = (separator + 1)..<bytes.count
    var parts: [Part] = []
    parts.reserveCapacity(keys.count + entries.count)
    for key in keys {
      let start = bytes.count
      bytes.append(contentsOf: key.utf8)
      let split = bytes.withUnsafeBytes { all in
        Self.split(UnsafeRawBufferPointer(rebasing: all[start...]), id: UnsafeRawBufferPointer(rebasing: all[id]))
      }
      guard let split, bytes.count - start <= CaskFormat.maximumKeyLength else {
        throw CaskError.invalidKey(reason: "an attached key is not its group, a text and its owner's id")
      }
      parts.append((split.group.shifted(by: start), split.text.shifted(by: start)))
    }
    for entry in entries {
      let groupStart = bytes.count
      bytes.append(contentsOf: entry.group.utf8)
      let textStart = bytes.count
      bytes.append(contentsOf: entry.text.utf8)
      let valid = bytes.withUnsafeBytes { all in
        textStart > groupStart
          && firstZero(in: UnsafeRawBufferPointer(rebasing: all[groupStart...]), before: all.count - groupStart) == nil
      }
      guard valid, bytes.count - groupStart + id.count + 2 <= CaskFormat.maximumKeyLength else {
        throw CaskError.invalidKey(reason: "an attached key is not its group, a text and its owner's id")
      }
      parts.append((groupStart..<textStart, textStart..<bytes.count))
    }
    return try parts.withUnsafeMutableBufferPointer { parts in
      try bytes.withUnsafeBytes { try section(of: parts, in: $0) }
    }
  }

  /// The section for `entries` alone: their groups' and texts' bytes copied once into a
  /// buffer on the stack, and their positions sorted beside them. Prevents: the entries' strings
  /// read (each a retain and a release) at every comparison of the sort and again as the
  /// section is written, a tenth of the atomic reference counting of a save with three indexes.
  private static func encode(_ entries: [AttachedEntry], owner: String) throws -> [UInt8] {
    guard let separator = owner.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else {
      throw CaskError.invalidKey(reason: "a key without a group carries no attached keys")
    }
    let idLength = owner.utf8.distance(from: owner.utf8.index(after: separator), to: owner.utf8.endIndex)
    var total = 0
    for entry in entries {
      let group = entry.group.utf8.count
      let text = entry.text.utf8.count
      guard group > 0, group + text + 2 + idLength <= CaskFormat.maximumKeyLength,
        !hasZero(entry.group), !hasZero(entry.text)
      else { throw CaskError.invalidKey(reason: "an attached key is not its group, a text and its owner's id") }
      total += group + text
    }
    return try withUnsafeTemporaryAllocation(byteCount: max(total, 1), alignment: 1) { bytes in
      try withUnsafeTemporaryAllocation(of: Part.self, capacity: entries.count) { parts in
        var end = 0
        for (index, entry) in entries.enumerated() {
          let groupStart = end
          end = copyUTF8(entry.group, to: bytes, at: end)
          let textStart = end
          end = copyUTF8(entry.text, to: bytes, at: end)
          (parts.baseAddress! + index).initialize(to: (groupStart..<textStart, textStart..<end))
        }
        return try section(of: parts, in: UnsafeRawBufferPointer(rebasing: bytes[..<end]))
      }
    }
  }

  /// A key's group and text, as ranges of a buffer of their bytes.
  private typealias Part = (group: Range<Int>, text: Range<Int>)

  /// Copies `string`'s UTF-8 bytes into `buffer` at `offset`; returns where they end.
  private static func copyUTF8(_ string: String, to buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
    let copied = string.utf8.withContiguousStorageIfAvailable { source -> Int in
      UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + source.count)])
        .copyMemory(from: UnsafeRawBufferPointer(source))
      return offset + source.count
    }
    if let copied { return copied }
    var end = offset
    for byte in string.utf8 {
      buffer[end] = byte
      end += 1
    }
    return end
  }

  /// Whether `string` holds a U+0000.
  private static func hasZero(_ string: String) -> Bool {
    let found = string.utf8.withContiguousStorageIfAvailable {
      firstZero(in: UnsafeRawBufferPointer($0), before: $0.count) != nil
    }
    return found ?? string.utf8.contains(CaskFormat.keyGroupSeparator)
  }

  /// The section listing `parts`, ranges of `all`, each group's texts in byte order, once.
  /// Sorts `parts` in place.
  private static func section(of parts: UnsafeMutableBufferPointer<Part>, in all: UnsafeRawBufferPointer) throws
    -> [UInt8]
  {
    var parts = parts
    func part(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: all[range]) }
    func precedes(_ left: Part, _ right: Part) -> Bool {
      let byGroup = compareBytes(part(left.group), part(right.group))
      return byGroup != 0 ? byGroup < 0 : compareBytes(part(left.text), part(right.text)) < 0
    }
    // An insertion sort for the few keys of a save (a handful of indexes), the library's sort
    // beyond. Prevents: the library's stable sort set up for three keys.
    if parts.count <= 8 {
      for end in parts.indices.dropFirst() {
        var at = end
        while at > 0, precedes(parts[at], parts[at - 1]) {
          parts.swapAt(at, at - 1)
          at -= 1
        }
      }
    } else {
      parts.sort(by: precedes)
    }
    // Each group's name, then its distinct texts; the counts are written when known. Room
    // for all of it at once (no key's parts take more than the key and its two counts).
    // Prevents: the section grown and copied again as each part is appended.
    var section: [UInt8] = []
    section.reserveCapacity(2 + all.count + 4 * parts.count)
    section += [0, 0]
    var groups = 0
    var textsAt = 0
    var texts = 0
    var previous: Part?
    for (group, text) in parts {
      let sameGroup = previous.map { compareBytes(part($0.group), part(group)) == 0 } ?? false
      if sameGroup, let previous, compareBytes(part(previous.text), part(text)) == 0 { continue }
      if !sameGroup {
        if groups > 0 { try Self.store(texts, at: textsAt, in: &section, what: "keys attached in one group") }
        groups += 1
        append(UInt16(group.count), to: &section)
        section.append(contentsOf: part(group))
        textsAt = section.count
        section += [0, 0]
        texts = 0
      }
      texts += 1
      append(UInt16(text.count), to: &section)
      section.append(contentsOf: part(text))
      previous = (group, text)
    }
    try Self.store(texts, at: textsAt, in: &section, what: "keys attached in one group")
    try Self.store(groups, at: 0, in: &section, what: "groups of attached keys")
    return section
  }

  /// Writes `count` as 2 bytes at `offset` of `bytes`.
  ///
  /// - Throws: `CaskError.invalidKey` when it is over 65,535.
  private static func store(_ count: Int, at offset: Int, in bytes: inout [UInt8], what: String) throws {
    guard count <= Int(UInt16.max) else { throw CaskError.invalidKey(reason: "more than 65,535 \(what)") }
    bytes[offset] = UInt8(truncatingIfNeeded: count)
    bytes[offset + 1] = UInt8(truncatingIfNeeded: count >> 8)
  }

  /// Compares two byte strings as the store orders keys.
  private static func compareBytes(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
    let common = min(left.count, right.count)
    if common > 0, let a = left.baseAddress, let b = right.baseAddress {
      let result = memcmp(a, b, common)
      if result != 0 { return result < 0 ? -1 : 1 }
    }
    return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
  }

  /// The ranges of the group and text in `key` when it is `group 0 text 0 id`.
  private static func split(_ key: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer)
    -> (group: Range<Int>, text: Range<Int>)?
  {
    // `memcmp` and `memchr` rather than the generic byte-by-byte sequence algorithms, on
    // every key attached by every save into an indexed collection.
    let zero = CaskFormat.keyGroupSeparator
    guard key.count >= id.count + 2, key[key.count - id.count - 1] == zero,
      compareBytes(UnsafeRawBufferPointer(rebasing: key[(key.count - id.count)...]), id) == 0,
      let first = firstZero(in: key, before: key.count - id.count - 1), first > 0
    else { return nil }
    let text = (first + 1)..<(key.count - id.count - 1)
    guard firstZero(in: UnsafeRawBufferPointer(rebasing: key[text]), before: text.count) == nil else { return nil }
    return (0..<first, text)
  }

  /// The offset of the first U+0000 among the first `end` bytes of `bytes`, if any.
  private static func firstZero(in bytes: UnsafeRawBufferPointer, before end: Int) -> Int? {
    guard end > 0, let base = bytes.baseAddress, let found = memchr(base, Int32(CaskFormat.keyGroupSeparator), end)
    else { return nil }
    return UnsafeRawPointer(found) - base
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
    guard isWellFormed(section, owner: owner) else { return false }
    return forEachKey(inChecked: section, owner: owner, body)
  }

  /// `forEachKey(in:owner:_:)` for a section already found well formed for `owner` (every
  /// section is checked where it comes in: made by `encode`, opened from a record's key
  /// message, decoded from a hint). Prevents: a save's own section checked again, byte by byte,
  /// as its keys go into the directory. A section that is not well formed stops the walk where
  /// it goes wrong; every key spelled still fits the buffer (a group and a text are disjoint
  /// parts of the section).
  ///
  /// - Returns: `false`, having called `body` for nothing, when the owner has no group.
  @discardableResult
  static func forEachKey(
    inChecked section: UnsafeRawBufferPointer, owner: UnsafeRawBufferPointer,
    _ body: (UnsafeRawBufferPointer) -> Void
  ) -> Bool {
    guard let separator = owner.firstIndex(of: CaskFormat.keyGroupSeparator) else { return false }
    let id = UnsafeRawBufferPointer(rebasing: owner[(separator + 1)...])
    // Every key spelled is a group and a text of the section, two separators and the id: sized
    // by the section rather than the longest key there can be. Prevents: a 64 KiB allocation
    // on the heap for every section walked.
    let longest = min(CaskFormat.maximumKeyLength, section.count + id.count + 2)
    withUnsafeTemporaryAllocation(byteCount: longest, alignment: 1) { buffer in
      // The parts copied one by one. Prevents: an array of the two parts made for every key.
      func put(_ part: UnsafeRawBufferPointer, at start: Int) -> Int {
        UnsafeMutableRawBufferPointer(rebasing: buffer[start..<start + part.count]).copyMemory(from: part)
        buffer[start + part.count] = CaskFormat.keyGroupSeparator
        return start + part.count + 1
      }
      walk(section) { group, text in
        let length = put(text, at: put(group, at: 0))
        UnsafeMutableRawBufferPointer(rebasing: buffer[length..<length + id.count]).copyMemory(from: id)
        body(UnsafeRawBufferPointer(rebasing: buffer[0..<length + id.count]))
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

extension Range<Int> {
  fileprivate func shifted(by offset: Int) -> Range<Int> { (lowerBound + offset)..<(upperBound + offset) }
}
