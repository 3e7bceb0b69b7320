import Foundation

/// JSON text for a binary object (Docs/FORMAT.md, section 16.3), without its model: what
/// `cask export --collection` writes for an object `BinaryCaskCoder` stored, so that
/// `cask import` and any JSON reader get the same fields.
///
/// Each kind has one JSON form, the one `JSONCaskCoder` reads back into the same value: a
/// keyed container is an object, an unkeyed one an array, a string, `URL` or `UUID` a string,
/// `Data` a base64 string, integers and floats numbers (a `Date` is its seconds since
/// 2001-01-01, which `JSONCaskCoder` reads as a `Date`).
package enum BinaryJSONText {
  /// Thrown when a value has no JSON form: an infinity or a NaN.
  package struct Unrepresentable: Error, CustomStringConvertible {
    package var description: String { "a number in the object is infinite or not a number, which JSON cannot hold" }
  }

  /// The JSON text of the binary object `object` (tag, version, one value).
  ///
  /// - Throws: `DecodingError.dataCorrupted` for bytes that are not a whole binary object,
  ///   `Unrepresentable` for an infinity or a NaN.
  /// - Complexity: O(n) in the object's size.
  package static func json(fromBinaryObject object: Data) throws -> Data {
    let reader = BinaryReader(bytes: [UInt8](object))
    let path: BinaryReader.Path = { [] }
    guard reader.bytes.count >= BinaryFormat.headerSize, reader.bytes[0] == BinaryFormat.tag else {
      throw reader.corrupted("not a binary object", path)
    }
    guard reader.bytes[1] == BinaryFormat.version else { throw reader.corrupted("unknown version", path) }
    var output: [UInt8] = []
    output.reserveCapacity(reader.bytes.count * 2)
    let end = try write(reader, at: BinaryFormat.headerSize, limit: reader.bytes.count, depth: 0, to: &output)
    guard end == reader.bytes.count else { throw reader.corrupted("bytes after the value", path) }
    return Data(output)
  }

  /// Appends the value at `offset` as JSON; returns where it ends.
  private static func write(
    _ reader: BinaryReader, at offset: Int, limit: Int, depth: Int, to output: inout [UInt8]
  ) throws -> Int {
    let path: BinaryReader.Path = { [] }
    let end = try reader.end(ofValueAt: offset, limit: limit, path: path)
    switch try reader.kind(at: offset, limit: limit, path: path) {
    case .null: output += Array("null".utf8)
    case .false: output += Array("false".utf8)
    case .true: output += Array("true".utf8)
    case .signed: output += Array(String(try reader.integer(Int64.self, at: offset, limit: end, path: path)).utf8)
    case .unsigned: output += Array(String(try reader.integer(UInt64.self, at: offset, limit: end, path: path)).utf8)
    case .float64, .float32:
      let value = try reader.double(at: offset, limit: end, path: path)
      guard value.isFinite else { throw Unrepresentable() }
      let isFloat = reader.bytes[offset] == BinaryFormat.Kind.float32.rawValue
      // The shortest text that reads back to the same bits, at the width that was stored.
      output += Array((isFloat ? Float(value).description : value.description).utf8)
    case .string: appendString(try reader.string(at: offset, limit: end, path: path), to: &output)
    case .bytes: appendString(try reader.data(at: offset, limit: end, path: path).base64EncodedString(), to: &output)
    case .uuid: appendString(try reader.uuid(at: offset, limit: end, path: path).uuidString, to: &output)
    case .keyed:
      try nest(depth, reader)
      let body = try reader.body(of: .keyed, at: offset, limit: end, type: [String: Any].self, path: path)
      if try keys(of: body, in: reader) == decimalFields,
        let decimal = try? BinaryDecoding.value(
          Decimal.self, reader: reader, at: offset, limit: end, parent: nil, key: nil, depth: depth)
      {
        // Foundation writes a `Decimal` as the keyed container of its fields, which a JSON
        // reader does not take for a number; JSON's own form of it is the number.
        output += Array(decimal.description.utf8)
        return end
      }
      output.append(UInt8(ascii: "{"))
      var position = body.lowerBound
      while position < body.upperBound {
        if position > body.lowerBound { output.append(UInt8(ascii: ",")) }
        let keyLength = try reader.length(at: &position, limit: body.upperBound, path: path)
        guard let key = String(validating: reader.bytes[position..<position + keyLength], as: UTF8.self) else {
          throw reader.corrupted("a key is not UTF-8", path)
        }
        appendString(key, to: &output)
        output.append(UInt8(ascii: ":"))
        position = try write(reader, at: position + keyLength, limit: body.upperBound, depth: depth + 1, to: &output)
      }
      output.append(UInt8(ascii: "}"))
    case .unkeyed:
      try nest(depth, reader)
      let body = try reader.body(of: .unkeyed, at: offset, limit: end, type: [Any].self, path: path)
      var position = body.lowerBound
      let count = try reader.varint(at: &position, limit: body.upperBound, path: path)
      output.append(UInt8(ascii: "["))
      for element in 0..<count {
        if element > 0 { output.append(UInt8(ascii: ",")) }
        position = try write(reader, at: position, limit: body.upperBound, depth: depth + 1, to: &output)
      }
      guard position == body.upperBound else {
        throw reader.corrupted("an array's count disagrees with its body", path)
      }
      output.append(UInt8(ascii: "]"))
    }
    return end
  }

  /// The fields of Foundation's keyed form of a `Decimal`.
  private static let decimalFields: Set<String> = ["exponent", "length", "isNegative", "isCompact", "mantissa"]

  /// The keys of the keyed container whose body is `body`.
  private static func keys(of body: Range<Int>, in reader: BinaryReader) throws -> Set<String> {
    var keys: Set<String> = []
    var position = body.lowerBound
    while position < body.upperBound, keys.count <= decimalFields.count {
      let keyLength = try reader.length(at: &position, limit: body.upperBound, path: { [] })
      keys.insert(String(decoding: reader.bytes[position..<position + keyLength], as: UTF8.self))
      position = try reader.end(ofValueAt: position + keyLength, limit: body.upperBound, path: { [] })
    }
    return keys
  }

  /// Prevents: crafted bytes nesting containers deeply enough to overflow the stack.
  private static func nest(_ depth: Int, _ reader: BinaryReader) throws {
    guard depth < BinaryFormat.maximumDepth else { throw reader.corrupted("containers nest too deeply", { [] }) }
  }

  /// Appends `text` as a JSON string: quotes, backslash escapes for `"` and `\`, and `\u`
  /// escapes for control characters, which JSON does not allow raw.
  private static func appendString(_ text: String, to output: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    output.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
      case 0x0A: output += Array("\\n".utf8)
      case 0x0D: output += Array("\\r".utf8)
      case 0x09: output += Array("\\t".utf8)
      case 0..<0x20: output += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }
}
