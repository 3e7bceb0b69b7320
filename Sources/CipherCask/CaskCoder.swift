import Foundation

/// Turns model objects into the bytes a collection stores, and back.
///
/// The default is `BinaryCaskCoder`, several times faster than `JSONCaskCoder` (`cask-bench
/// coders` and `cask-bench objects`, Docs/BENCHMARKS.md). Both keep old objects readable when a
/// field is added as optional (Docs/GUIDE.md), and each reads the other's objects (Docs/FORMAT.md,
/// section 16), so a collection moves between them without a migration. `JSONCaskCoder` stays
/// for objects that other JSON readers must open as they are stored.
public protocol CaskCoder: Sendable {
  func encode<T: Encodable>(_ value: T) throws -> Data
  func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension CaskCoder where Self == BinaryCaskCoder {
  /// The default coder: `BinaryCaskCoder`.
  public static var `default`: BinaryCaskCoder { BinaryCaskCoder() }
}

extension CaskCoder where Self == JSONCaskCoder {
  /// `JSONCaskCoder`: objects stored as JSON text.
  public static var json: JSONCaskCoder { JSONCaskCoder() }
}

/// JSON with ISO 8601 dates: readable, tolerant of added optional fields.
///
/// Every finite `Date` reads back exactly as it was saved. Dates keep their fraction of a
/// second, with as many digits as it takes to read the same `Date` back (`ExactISO8601`);
/// whole-second dates are written, and read, as JSONEncoder's `.iso8601` strategy writes them.
/// A date too far from now for such text (some 30,000 years or more) is written as a number,
/// seconds since 2001-01-01 00:00:00 UTC, as a plain `JSONEncoder` writes every date; numbers
/// read back too, so objects a default `JSONEncoder` wrote are readable. An infinite date cannot
/// be written: `EncodingError.invalidValue`.
public struct JSONCaskCoder: CaskCoder {
  public init() {}

  public func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      if let text = ExactISO8601.string(from: date) {
        try container.encode(text)
      } else {
        try container.encode(date.timeIntervalSinceReferenceDate)  // throws for an infinity
      }
    }
    return try encoder.encode(value)
  }

  /// Reads a JSON object, or a binary one as `BinaryCaskCoder` does (told apart by the first
  /// byte, Docs/FORMAT.md), so collections read both side by side.
  public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    if data.first == BinaryFormat.tag { return try BinaryCaskCoder.decodeBinary(type, from: data) }
    return try decodeJSON(type, from: data)
  }

  func decodeJSON<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
      let container = try decoder.singleValueContainer()
      guard let text = try? container.decode(String.self) else {
        return Date(timeIntervalSinceReferenceDate: try container.decode(Double.self))
      }
      guard let date = ExactISO8601.date(from: text) else {
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date")
      }
      return date
    }
    return try decoder.decode(type, from: data)
  }
}

/// Binary property lists: an alternative measured against JSON in `cask-bench objects`. Unlike
/// JSON, a property list stores an infinite date (a date is a number there) and reads it back.
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
