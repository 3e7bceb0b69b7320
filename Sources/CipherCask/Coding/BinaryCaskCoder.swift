import Foundation

/// A compact binary encoding of Codable objects, several times faster than JSON (see
/// `cask-bench coders` in Docs/BENCHMARKS.md), byte by byte in Docs/FORMAT.md ("Object
/// encoding").
///
/// Everything Codable can express round-trips: nested structs and enums, enums with associated
/// values, optionals, arrays, dictionaries with any key, custom `encode(to:)`/`init(from:)`
/// and `CodingKeys`. A `Date` reads back to the bit (infinities and NaN too), integers keep
/// their value and are range-checked on the way back, and `Data`, `UUID` and `URL` have
/// layouts of their own. Keys are stored by name, so models change as they do with JSON: a
/// field added as optional reads as `nil` from older objects, a removed field is ignored.
///
/// `decode` reads JSON too (`JSONCaskCoder`'s objects, told apart by their first byte), so a
/// collection that moves to this coder keeps reading what it stored before; objects take the
/// binary encoding as they are saved again.
///
/// Damaged bytes throw `DecodingError.dataCorrupted` (inside `CollectionError.decoding` when a
/// collection reads them): every length is checked against the bytes left before anything is
/// allocated for it.
public struct BinaryCaskCoder: CaskCoder {
  public init() {}

  /// - Throws: whatever the value's own `encode(to:)` throws.
  public func encode<T: Encodable>(_ value: T) throws -> Data {
    var out: [UInt8] = [BinaryFormat.tag, BinaryFormat.version]
    out.reserveCapacity(256)
    try BinaryEncoding.append(value, to: &out, parent: nil, key: nil)
    return Data(out)
  }

  /// Reads a binary object, or a JSON one as `JSONCaskCoder` does.
  ///
  /// - Throws: `DecodingError`; `.dataCorrupted` for damaged bytes.
  public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    guard data.first == BinaryFormat.tag else { return try JSONCaskCoder().decodeJSON(type, from: data) }
    return try Self.decodeBinary(type, from: data)
  }

  static func decodeBinary<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    // One memcpy. Prevents: `[UInt8](data)` copying through Data's iterator, byte by byte (a
    // fifteenth of a small object's decode).
    let bytes = [UInt8](unsafeUninitializedCapacity: data.count) { buffer, initialized in
      initialized = data.copyBytes(to: buffer)
    }
    let reader = BinaryReader(bytes: bytes)
    guard reader.bytes.count >= BinaryFormat.headerSize, reader.bytes[1] == BinaryFormat.version else {
      throw reader.corrupted(
        reader.bytes.count < BinaryFormat.headerSize ? "the header is cut off" : "unknown version", { [] })
    }
    let limit = reader.bytes.count
    let end = try reader.end(ofValueAt: BinaryFormat.headerSize, limit: limit, path: { [] })
    guard end == limit else { throw reader.corrupted("bytes follow the value", { [] }) }
    return try BinaryDecoding.value(
      type, reader: reader, at: BinaryFormat.headerSize, limit: limit, parent: nil, key: nil, depth: 0)
  }
}

extension CaskCoder where Self == BinaryCaskCoder {
  /// The binary coder.
  public static var binary: BinaryCaskCoder { BinaryCaskCoder() }
}
