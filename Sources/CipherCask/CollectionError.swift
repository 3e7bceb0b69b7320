import Foundation

/// The errors of the typed collection layer (the engine's are `CaskError`). No description
/// contains an indexed value, an id or an object. (`decoding` carries the id for the
/// program's use; its description leaves it out.)
public enum CollectionError: Error, Sendable {
  // MARK: Reading objects

  /// Thrown when a stored object no longer decodes as its collection's type; `underlying` is
  /// the decoder's error.
  case decoding(collection: String, id: String, underlying: any Error & Sendable)

  // MARK: Importing

  /// Thrown when JSON given to an import is malformed or does not match the type; nothing
  /// was written. `line` is the line an object starts on for JSON Lines input, or its
  /// position in the array (counting from 1) for a JSON array read by `importJSON`; `nil`
  /// when the whole input is at fault.
  case invalidImport(reason: String, line: Int?)

  // MARK: Indexes

  /// Thrown when a save, batch, transaction, import or pull would give two objects of
  /// `collection` the same value in the unique index `index`. Nothing of the commit is written.
  case uniqueViolation(collection: String, index: String)
  /// Thrown when an operation names an index that `collection` does not have (declared or
  /// stored): `dropIndex` of an unknown name, say.
  case indexNotDeclared(collection: String, index: String)
  /// Thrown when an index declaration cannot be used: an empty name, a name with U+0000 or
  /// U+0001, or two indexes of one name in one collection.
  case invalidIndex(collection: String, reason: String)
  /// Thrown when an indexed value's entry would make a store key longer than the engine
  /// allows (a string of some 65,000 bytes).
  case indexValueTooLong(collection: String, index: String)
}

extension CollectionError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .decoding(let collection, _, let underlying):
      return "an object of collection '\(collection)' does not decode: \(Self.summary(of: underlying))"
    case .invalidImport(let reason, let line):
      return "invalid import\(line.map { " at line \($0)" } ?? ""): \(reason)"
    case .uniqueViolation(let collection, let index):
      return "two objects of collection '\(collection)' would share a value of its unique index '\(index)'"
    case .indexNotDeclared(let collection, let index):
      return "collection '\(collection)' has no index '\(index)'"
    case .invalidIndex(let collection, let reason):
      return "invalid index of collection '\(collection)': \(reason)"
    case .indexValueTooLong(let collection, let index):
      return "a value of index '\(index)' of collection '\(collection)' is too long for a key"
    }
  }

  /// What a field must hold, for the descriptions of malformed data that quote no value
  /// (other descriptions may quote one, "Parsed JSON number <...> does not fit", and are left out).
  private static let expectedForms = [
    ImportDateLocation.foundationISO8601: ImportDateLocation.expectedISO8601,
    ImportDateLocation.expectedISO8601: ImportDateLocation.expectedISO8601,
    "Encountered Data is not valid Base64.": "expected base64 text",
    "Invalid URL string.": "expected a URL",
  ]

  /// A decoding or encoding error's kind and coding path (and, for malformed data, the form
  /// expected where that is known), without the values it may quote.
  public static func summary(of error: any Error) -> String {
    func path(_ codingPath: [any CodingKey]) -> String {
      codingPath.map { key in
        let keyType = String(describing: type(of: key))
        // An `[Int: V]` dictionary's keys carry an `intValue` too, and are data.
        if keyType == "_DictionaryCodingKey" { return "*" }
        if let index = key.intValue { return String(index) }
        // A dictionary's keys are the data's, not field names: the coders' own key types
        // (`_CodingKey`, `_DictionaryCodingKey`, ...) carry them, and are left out.
        return keyType.hasPrefix("_") ? "*" : key.stringValue
      }.joined(separator: ".")
    }
    if case .invalidValue(let value, let context) = error as? EncodingError {
      return "cannot encode this \(type(of: value)) at '\(path(context.codingPath))'"
    }
    guard let decoding = error as? DecodingError else { return String(describing: type(of: error)) }
    switch decoding {
    case .typeMismatch(let type, let context): return "type mismatch for \(type) at '\(path(context.codingPath))'"
    case .valueNotFound(let type, let context): return "missing \(type) value at '\(path(context.codingPath))'"
    case .keyNotFound(let key, let context):
      return "missing key '\(key.stringValue)' at '\(path(context.codingPath))'"
    case .dataCorrupted(let context):
      let expected = expectedForms[context.debugDescription].map { ": \($0)" } ?? ""
      return "malformed data at '\(path(context.codingPath))'\(expected)"
    @unknown default: return "decoding failed"
    }
  }
}

extension CollectionError: Equatable {
  /// Errors are equal when they are the same case with the same details; `decoding` errors
  /// compare collection and id (the underlying error is not `Equatable`).
  public static func == (lhs: CollectionError, rhs: CollectionError) -> Bool {
    switch (lhs, rhs) {
    case (.decoding(let collection, let id, _), .decoding(let otherCollection, let otherID, _)):
      return collection == otherCollection && id == otherID
    case (.invalidImport(let reason, let line), .invalidImport(let otherReason, let otherLine)):
      return reason == otherReason && line == otherLine
    case (.uniqueViolation(let collection, let index), .uniqueViolation(let otherCollection, let otherIndex)),
      (.indexNotDeclared(let collection, let index), .indexNotDeclared(let otherCollection, let otherIndex)),
      (.indexValueTooLong(let collection, let index), .indexValueTooLong(let otherCollection, let otherIndex)):
      return collection == otherCollection && index == otherIndex
    case (.invalidIndex(let collection, let reason), .invalidIndex(let otherCollection, let otherReason)):
      return collection == otherCollection && reason == otherReason
    // Each case named, no `default`: prevents a case added later comparing equal to nothing,
    // itself included, without the compiler asking for it here.
    case (.decoding, _), (.invalidImport, _), (.uniqueViolation, _), (.indexNotDeclared, _), (.invalidIndex, _),
      (.indexValueTooLong, _):
      return false
    }
  }
}
