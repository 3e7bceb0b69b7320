import Foundation

/// The errors of the typed collection layer (the engine's are `CaskError`). No case carries
/// an indexed value, an id or an object.
public enum CollectionError: Error, Sendable, Equatable {
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
