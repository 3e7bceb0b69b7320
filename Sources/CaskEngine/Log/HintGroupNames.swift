/// The group names of a hint's attachment sections, written once per hint (Docs/FORMAT.md,
/// section 6): a "CCHINTS3" hint lists them in a table after its group section, and each of its
/// sections names a group by its number there instead of spelling it. Why: an index's group
/// name is about 40 bytes, repeated in the section of every object's entry, where the texts the
/// entries differ by are a few bytes each (section 13).
struct HintGroupNames {
  /// The names, in the order of their numbers.
  private(set) var names: [[UInt8]] = []
  private var numbers: [[UInt8]: UInt16] = [:]

  /// The names of every attachment section of `entries`, numbered in the order they first
  /// appear; `nil` when there are more than a table can number (the hint is then written with
  /// its sections whole) or a section is malformed.
  init?(entries: HintEntries) {
    var fits = true
    entries.forEachEntryWithSection { _, _, _, _, section in
      guard fits, !section.isEmpty else { return }
      fits = Self.forEachGroup(in: section) { name, _ in
        guard numbers[Array(name)] == nil else { return true }
        guard names.count < Int(UInt16.max) else { return false }
        numbers[Array(name)] = UInt16(names.count)
        names.append(Array(name))
        return true
      }
    }
    guard fits else { return nil }
  }

  /// Appends the table: the number of names (2), then each name's length (2) and bytes.
  func append(to payload: inout ByteWriter) {
    payload.append(UInt16(names.count))
    for name in names {
      payload.append(UInt16(name.count))
      payload.append(contentsOf: name)
    }
  }

  /// Appends `section` (whole, as a record holds it) with each group's name length and name
  /// replaced by the name's number (2): its length first (4), as any section in a hint.
  func appendSection(_ section: UnsafeRawBufferPointer, to payload: inout ByteWriter) {
    var compact = ByteWriter(capacity: section.count)
    compact.append(loadLittleEndian(section, at: 0, as: UInt16.self))
    _ = Self.forEachGroup(in: section) { name, texts in
      compact.append(numbers[Array(name)] ?? 0)
      compact.append(contentsOf: texts)
      return true
    }
    payload.append(UInt32(compact.bytes.count))
    payload.append(contentsOf: compact.bytes)
  }

  /// Reads a table as `append(to:)` writes it, each name non-empty; `nil` when it is cut short.
  static func read(from reader: inout ByteReader) -> [UnsafeRawBufferPointer]? {
    guard let count = reader.readUInt16() else { return nil }
    var names: [UnsafeRawBufferPointer] = []
    for _ in 0..<count {
      guard let length = reader.readUInt16(), length > 0, let name = reader.readBytes(Int(length)) else { return nil }
      names.append(name)
    }
    return names
  }

  /// Appends to `output` the section whole, as a record holds it, that the `compact` one of a
  /// "CCHINTS3" hint stands for, its names taken from `names`.
  ///
  /// - Returns: `false` when a group's number is not in the table or the section is cut short
  ///   (whether the whole section is well formed is checked on the result).
  static func expand(_ compact: UnsafeRawBufferPointer, names: [UnsafeRawBufferPointer], into output: inout [UInt8])
    -> Bool
  {
    var reader = ByteReader(compact)
    guard let groups = reader.readUInt16() else { return false }
    withUnsafeBytes(of: groups.littleEndian) { output.append(contentsOf: $0) }
    for _ in 0..<groups {
      guard let number = reader.readUInt16(), Int(number) < names.count, let texts = textsExtent(&reader) else {
        return false
      }
      let name = names[Int(number)]
      withUnsafeBytes(of: UInt16(name.count).littleEndian) { output.append(contentsOf: $0) }
      output.append(contentsOf: name)
      output.append(contentsOf: texts)
    }
    return reader.remaining == 0
  }

  /// Calls `body` with each group's name and the bytes after it (its text count and texts) in
  /// a whole section; stops when `body` returns `false`.
  ///
  /// - Returns: `false` when the section is malformed or `body` stopped.
  private static func forEachGroup(
    in section: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
  ) -> Bool {
    var reader = ByteReader(section)
    guard let groups = reader.readUInt16() else { return false }
    for _ in 0..<groups {
      guard let length = reader.readUInt16(), let name = reader.readBytes(Int(length)),
        let texts = textsExtent(&reader), body(name, texts)
      else { return false }
    }
    return reader.remaining == 0
  }

  /// Reads a group's text count (2) and texts (each its length (2) and bytes), returning the
  /// bytes they span; `nil` when cut short.
  private static func textsExtent(_ reader: inout ByteReader) -> UnsafeRawBufferPointer? {
    let start = reader.offset
    guard let count = reader.readUInt16() else { return nil }
    for _ in 0..<count {
      guard let length = reader.readUInt16(), reader.readBytes(Int(length)) != nil else { return nil }
    }
    return reader.bytes(from: start)
  }
}
