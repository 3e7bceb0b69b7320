import Foundation

/// Turns model objects into the bytes a collection stores, and back.
///
/// The default, `JSONCaskCoder`, was chosen by measurement (`cask-bench objects`, see
/// Docs/GUIDE.md): it keeps old objects readable when a field is added as optional, and it
/// is what `importJSON` and `cask export --format json` speak anyway.
public protocol CaskCoder: Sendable {
  func encode<T: Encodable>(_ value: T) throws -> Data
  func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension CaskCoder where Self == JSONCaskCoder {
  /// The default coder.
  public static var `default`: JSONCaskCoder { JSONCaskCoder() }
}

/// JSON with ISO 8601 dates and sorted keys: readable, tolerant of added optional fields.
public struct JSONCaskCoder: CaskCoder {
  public init() {}

  public func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    return try encoder.encode(value)
  }

  public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(type, from: data)
  }
}

/// Binary property lists: an alternative measured against JSON in `cask-bench objects`.
public struct PropertyListCaskCoder: CaskCoder {
  public init() {}

  public func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = PropertyListEncoder()
    encoder.outputFormat = .binary
    return try encoder.encode(value)
  }

  public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    try PropertyListDecoder().decode(type, from: data)
  }
}
