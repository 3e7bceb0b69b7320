import Foundation

/// Decodes the objects of an import with a `JSONDecoder`'s settings: through
/// `JSONTapeDecoding` where it can answer, through the `JSONDecoder` itself where it cannot
/// (every error, and the rare shapes it leaves to Foundation), so that each object, and each
/// error, is the one `JSONDecoder` gives.
///
/// When most objects of an import end up with `JSONDecoder` anyway (a model with a `Decimal`,
/// say), it stops trying the fast path, which then only costs. Used on one thread at a time.
package final class ImportObjectDecoder {
  private let decoder: JSONDecoder
  private var fast: JSONTapeDecoding?
  private var attempts = 0
  private var declined = 0

  package init(_ decoder: JSONDecoder) {
    self.decoder = decoder
    self.fast = JSONTapeDecoding(decoder)
  }

  /// `bytes` decoded as `type`, exactly as `JSONDecoder.decode(_:from:)` decodes it.
  ///
  /// - Throws: `JSONDecoder`'s error for the same bytes.
  package func decode<T: Decodable>(_ type: T.Type, from bytes: Data) throws -> T {
    if let fast {
      attempts += 1
      if let value = bytes.withUnsafeBytes({ fast.decode(type, from: $0) }) { return value }
      declined += 1
      if attempts >= 64 && declined * 4 > attempts { self.fast = nil }
    }
    return try decoder.decode(type, from: bytes)
  }

  /// `error`, thrown by `decode(type, from: bytes)`, at the path of the date's field when it
  /// is an `.iso8601` date that does not parse (`ImportDateLocation`); otherwise `error`.
  package func locatingDate<T: Decodable>(_ error: any Error, decoding type: T.Type, from bytes: Data) -> any Error {
    ImportDateLocation.located(error, decoding: type, from: bytes, with: decoder)
  }

  /// What the fast path alone makes of `bytes`: `nil` where it leaves the answer to
  /// `JSONDecoder`. For tests and fuzzing, which check it against `JSONDecoder`.
  package static func fastPath<T: Decodable>(_ type: T.Type, from bytes: Data, decoder: JSONDecoder) -> T? {
    guard let fast = JSONTapeDecoding(decoder) else { return nil }
    return bytes.withUnsafeBytes { fast.decode(type, from: $0) }
  }
}
