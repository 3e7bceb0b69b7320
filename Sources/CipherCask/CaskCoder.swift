import Foundation

/// Turns model objects into the bytes a collection stores, and back.
///
/// The default, `JSONCaskCoder`, was chosen by measurement (`cask-bench coders`, see
/// Docs/BENCHMARKS.md): it encodes and decodes faster than `PropertyListCaskCoder`, both keep
/// old objects readable when a field is added as optional (Docs/GUIDE.md), and JSON is what
/// `importJSON` reads anyway.
public protocol CaskCoder: Sendable {
  func encode<T: Encodable>(_ value: T) throws -> Data
  func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension CaskCoder where Self == JSONCaskCoder {
  /// The default coder.
  public static var `default`: JSONCaskCoder { JSONCaskCoder() }
}

/// JSON with ISO 8601 dates: readable, tolerant of added optional fields.
///
/// Dates keep their fraction of a second, with as many digits as it takes to read the same
/// `Date` back (`ExactISO8601`); whole-second dates are written, and read, as JSONEncoder's
/// `.iso8601` strategy writes them.
public struct JSONCaskCoder: CaskCoder {
  public init() {}

  public func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      try container.encode(ExactISO8601.string(from: date))
    }
    return try encoder.encode(value)
  }

  public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
      let container = try decoder.singleValueContainer()
      guard let date = ExactISO8601.date(from: try container.decode(String.self)) else {
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date")
      }
      return date
    }
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
