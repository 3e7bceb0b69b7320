import Foundation

/// One declared index of a collection, without its object type.
/// Unchecked: the key path is an immutable value, only compared.
///
/// A class: every write walks the descriptors of its collection, and a struct of a dozen
/// references was retained and released field by field at each step.
final class IndexDescriptor: @unchecked Sendable {
  let name: String
  let kind: CaskIndexKind
  let isUnique: Bool
  let keyPath: AnyKeyPath
  /// The indexed fields: `[keyPath]`, or several for a composite index.
  let keyPaths: [AnyKeyPath]
  let keyPathText: String
  let valueType: String
  let hash: String
  let group: String

  init(
    name: String, kind: CaskIndexKind, isUnique: Bool, keyPath: AnyKeyPath, keyPaths: [AnyKeyPath],
    keyPathText: String, valueType: String, hash: String, group: String
  ) {
    self.name = name
    self.kind = kind
    self.isUnique = isUnique
    self.keyPath = keyPath
    self.keyPaths = keyPaths
    self.keyPathText = keyPathText
    self.valueType = valueType
    self.hash = hash
    self.group = group
  }

  /// Whether the value type is an `Optional`, whose `nil` (text "0") a unique index allows
  /// for any number of objects.
  var isOptional: Bool { valueType.hasPrefix("Optional<") }

  /// Whether it indexes several fields (its texts are `IndexText.composite` of theirs).
  var isComposite: Bool { keyPaths.count > 1 }

  func catalogEntry(state: IndexCatalog.State) -> IndexCatalog.Entry {
    IndexCatalog.Entry(
      name: name, keyPath: keyPathText, kind: kind.rawValue, valueType: valueType, hash: hash, state: state)
  }
}

/// A collection's declared indexes, without its object type: what the commit hook and the
/// builder need to turn a stored object into index entries.
protocol IndexedDefinition: Sendable {
  var collection: String { get }
  var descriptors: [IndexDescriptor] { get }
  /// Why the declaration cannot be used, if it cannot.
  var invalidReason: String? { get }
  /// The texts of each index's entries for a stored object, in the order of `descriptors`.
  ///
  /// - Throws: `CollectionError.decoding` when the bytes do not decode as the declared type:
  ///   an object whose entries cannot be computed fails the work (a commit, a build) rather
  ///   than being left out of the index, which would make queries silently short.
  func texts(from data: Data, id: String) throws -> [[String]]
}

/// The declared indexes of one collection of `T`.
struct TypedIndexDefinition<T: Codable & Identifiable & Sendable>: IndexedDefinition
where T.ID: CustomStringConvertible & Sendable {
  let collection: String
  let coder: any CaskCoder
  let indexes: [CaskIndex<T>]
  let descriptors: [IndexDescriptor]
  let invalidReason: String?
  /// Each index's `extract`, in order.
  private let extractors: [@Sendable (T) -> [String]]

  init(collection: String, coder: any CaskCoder, indexes: [CaskIndex<T>]) {
    self.collection = collection
    self.coder = coder
    self.indexes = indexes
    self.extractors = indexes.map(\.extract)
    self.descriptors = indexes.map { index in
      IndexDescriptor(
        name: index.name, kind: index.kind, isUnique: index.kind == .unique, keyPath: index.keyPath,
        keyPaths: index.keyPaths, keyPathText: index.keyPathText, valueType: index.valueType,
        hash: index.definitionHash,
        group: IndexStoreKeys.group(collection: collection, index: index.name, hash: index.definitionHash))
    }
    var names = Set<ByteString>()
    var reason: String?
    for index in indexes {
      if let problem = index.identityProblem {
        reason = problem
      } else if index.name.isEmpty || index.name.utf8.contains(where: { $0 < 2 }) {
        reason = "index names must be non-empty and must not contain U+0000 or U+0001"
      } else if !names.insert(ByteString(index.name)).inserted {
        reason = "two indexes are named '\(index.name)'"
      }
    }
    self.invalidReason = reason
  }

  func texts(from data: Data, id: String) throws -> [[String]] {
    let object: T
    do {
      object = try coder.decode(T.self, from: data)
    } catch {
      throw CollectionError.decoding(collection: collection, id: id, underlying: error)
    }
    return texts(of: object)
  }

  func texts(of object: T) -> [[String]] {
    // The closures kept apart and called in a loop. Prevents: the unspecialized generic `map`
    // over `CaskIndex<T>`, which copied each index (a dozen references) to call its closure.
    var texts: [[String]] = []
    texts.reserveCapacity(extractors.count)
    for extract in extractors { texts.append(extract(object)) }
    return texts
  }
}
