import Foundation

/// Names the field of a date an import cannot read. Foundation's `JSONDecoder` with the
/// `.iso8601` strategy reports such a date at the path of the object that holds it, without the
/// field's key (`malformed data at ''` for a top-level object): the object is decoded once more,
/// on that error only, with a strategy that parses the same way and fails at the field's path.
enum ImportDateLocation {
  /// Foundation's description of an `.iso8601` date it cannot parse.
  static let foundationISO8601 = "Expected date string to be ISO8601-formatted."
  /// The form an `.iso8601` date must have, as error text shows it (never the value).
  static let expectedISO8601 = "expected an ISO 8601 date such as 2026-01-31T18:00:00Z"

  /// `error`, or, when it is `decoder`'s `.iso8601` date error, the same error at the path of
  /// the date's field.
  static func located<T: Decodable>(
    _ error: any Error, decoding type: T.Type, from data: Data, with decoder: JSONDecoder
  ) -> any Error {
    guard case .dataCorrupted(let context) = error as? DecodingError,
      context.debugDescription == foundationISO8601, case .iso8601 = decoder.dateDecodingStrategy
    else { return error }
    let locating = JSONDecoder()
    locating.keyDecodingStrategy = decoder.keyDecodingStrategy
    locating.dataDecodingStrategy = decoder.dataDecodingStrategy
    locating.nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
    locating.userInfo = decoder.userInfo
    locating.allowsJSON5 = decoder.allowsJSON5
    locating.assumesTopLevelDictionary = decoder.assumesTopLevelDictionary
    locating.dateDecodingStrategy = .custom { dateDecoder in
      let text = try dateDecoder.singleValueContainer().decode(String.self)
      guard let date = try? Date.ISO8601FormatStyle().parse(text) else {
        throw DecodingError.dataCorrupted(
          DecodingError.Context(codingPath: dateDecoder.codingPath, debugDescription: expectedISO8601))
      }
      return date
    }
    do {
      _ = try locating.decode(type, from: data)
      return error  // read this time: keep what the import's own decoder said
    } catch {
      return error
    }
  }
}
